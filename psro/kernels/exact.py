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
from psro.kernels.base import KernelError, KernelExploitability
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
    if kernel_for(game) is None:
        raise KernelError(f"no exact kernel implements {game}")
    module, name = KERNELS[game.get_type().short_name][1].split(":")
    return getattr(importlib.import_module(module), name)(game, seats, progress=progress)
