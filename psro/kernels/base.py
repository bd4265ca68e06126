"""What every exact kernel shares: its error, the batch of information sets a policy is asked
at, and the result of an evaluation."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


class KernelError(ValueError):
    """A game the kernel does not implement, or one too large for its memory limit."""


def threads() -> int:
    """Threads a kernel runs on (its walk, and the networks it asks):
    ``PSRO_KERNEL_THREADS``, else the cores this process may use."""
    given = os.environ.get("PSRO_KERNEL_THREADS")
    if given:
        if not given.isdigit() or int(given) < 1:
            raise KernelError(f"PSRO_KERNEL_THREADS={given!r}: give a whole number of "
                              f"threads, at least 1")
        return int(given)
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        os.cpu_count() or 1


@dataclass
class InfoBatch:
    """Information sets of one player that a policy is asked at, in a kernel's order:
    OpenSpiel's information-state ``tensors`` (float32, (N, size)), the ``legal`` actions
    ((N, actions) bool), and on demand their OpenSpiel strings and one pyspiel state each
    (``strings()``, ``states()``; :class:`KernelError` where the kernel cannot give them) and
    a ``label(row)`` naming one in messages."""

    player: int
    tensors: np.ndarray
    legal: np.ndarray
    strings: Callable[[], list[str]]
    states: Callable[[], list]
    label: Callable[[int], str]


@dataclass
class KernelExploitability:
    """What an exact kernel measured: ``nash_conv``, ``exploitability`` (NashConv / players),
    per player ``gains`` (best-response value minus the policy's value) and ``values``,
    ``best_values`` (the best responses' values), ``best_actions[p]`` (the best response of
    player p: its action at each of its information sets in the kernel's numbering, -1 where
    another player acts), ``seconds`` (``rules``: numbering the information sets;
    ``tabularise``: asking the policies; ``walk``: the compiled sweeps) and
    ``information_sets`` (how many the policies were asked at)."""

    nash_conv: float
    exploitability: float
    gains: np.ndarray
    values: np.ndarray
    best_values: np.ndarray
    best_actions: list[np.ndarray]
    seconds: dict = field(default_factory=dict)
    information_sets: int = 0
    kind: str = "exact"
    histories: int | None = None
    """Histories the walk visited, where the kernel walks them (the placement games)."""


@dataclass
class KernelSums:
    """Both players' mixtures as a kernel holds them once every member is asked: ``sums[p]``
    is player p's sequence-form sum of its members (the placement games: one entry a
    sequence; liar's dice: its reach to each "Liar" call, per public state and hand),
    ``seconds`` and ``information_sets`` what asking them cost (as in
    :class:`KernelExploitability`), ``walked`` what the kernel's walk needs besides (its
    rules and tries), made once for the game."""

    sums: list[np.ndarray]
    seconds: dict
    information_sets: int
    walked: tuple = ()
