"""Exact exploitability through a compiled kernel (:mod:`psro.kernels`): the policies of the
players, asked in batches at every information set (:mod:`psro.kernels.asking`), and the
kernel's best responses.

A player's policy is a mixture ``[(policy, weight), ...]`` in sequence form (a run's
meta-policy: member k with weight ``w_k``; one policy with weight 1 otherwise): the kernel sums
each member's sequence-form strategy (or reach) with its weight, which is exactly the
behavioural policy of the mixture. A member may be anything
:func:`~psro.kernels.asking.batch_probs` reads.
"""

from __future__ import annotations

import importlib

from psro.kernels import KERNELS, kernel_for
from psro.kernels.base import KernelError, KernelExploitability, KernelSums
from psro.kernels.progress import MixtureProgress


def mixture_seats(populations: list[list], weights: list) -> list[list[tuple[object, float]]]:
    """Per player, the sequence-form mixture ``[(member, weight), ...]`` of a meta-policy
    (``populations[p]`` its members, ``weights[p]`` their weights), as
    :func:`exact_exploitability` takes it."""
    return [[(m, float(w)) for m, w in zip(pop, mix, strict=True)]
            for pop, mix in zip(populations, weights, strict=True)]


def exact_exploitability(game, seats: list[list[tuple[object, float]]],
                         progress: MixtureProgress | None = None) -> KernelExploitability:
    """Exact best responses, NashConv and exploitability of the policies ``seats`` (per
    player, a sequence-form mixture ``[(policy, weight), ...]``; weights sum to 1) in the
    pyspiel game ``game``, by its kernel (:func:`psro.kernels.kernel_for`;
    :class:`KernelError` for a game or variant without one, before any work). With
    ``progress`` (:class:`~psro.kernels.progress.MixtureProgress`), the members summed so far
    are saved as it goes, and an evaluation of the same mixtures interrupted before resumes
    from them (the same sums bit for bit)."""
    return _kernel_function(game, 1)(game, seats, progress=progress)


def exact_sums(game, seats: list[list[tuple[object, float]]],
               progress: MixtureProgress | None = None) -> KernelSums:
    """Both players' mixtures ``seats`` (as :func:`exact_exploitability` takes them) asked at
    every information set and summed in sequence form by the kernel of ``game``, for
    :func:`exact_cross_values` (``progress``: where an interrupted summing resumes; it keeps
    the finished sums, so a later call with the same file asks no member again)."""
    return _kernel_function(game, 2)(game, seats, progress=progress)


def exact_cross_values(game, own: KernelSums, others: list[KernelSums]
                       ) -> list[tuple[float, float]]:
    """For each ``other`` of ``others``: the exact expected return of its player 0 against
    ``own``'s player 1, and of its player 1 against ``own``'s player 0 (all sums of the same
    game, from :func:`exact_sums`). One walk of ``own``'s pair serves every other: a
    player's return is bilinear in the two sequence forms. The kernels' games are two-player
    zero-sum: the opponent's return is the negative."""
    return _kernel_function(game, 3)(own, others)


def exact_head_to_head(game, a: list[list[tuple[object, float]]],
                       b: list[list[tuple[object, float]]]) -> tuple[float, float]:
    """The exact head-to-head result of the policies ``a`` against ``b`` (each per player a
    sequence-form mixture, as :func:`exact_exploitability` takes them): A's expected return
    as player 0 against B's player 1, and as player 1 against B's player 0."""
    held_a, held_b = exact_sums(game, a), exact_sums(game, b)
    return exact_cross_values(game, held_b, [held_a])[0]


def _kernel_function(game, which: int):
    """The kernel function ``which`` of :data:`psro.kernels.KERNELS` for ``game``;
    :class:`KernelError` for a game or variant without a kernel, before any work."""
    if kernel_for(game) is None:
        raise KernelError(f"no exact kernel implements {game}")
    module, name = KERNELS[game.get_type().short_name][which].split(":")
    return getattr(importlib.import_module(module), name)
