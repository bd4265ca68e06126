"""Exact exploitability in liar's dice by a walk of its public tree
(:mod:`psro.kernels.liars_dice`): each member's reach swept forward, the best responses
backward."""

from __future__ import annotations

import time

import numpy as np

from psro.kernels.asking import asked_in_order, batch_probs
from psro.kernels.base import KernelExploitability, KernelSums
from psro.kernels.liars_dice import (
    CHUNK,
    LiarsDiceRules,
    _best_response,
    _policy_value,
    _propagate,
    acting_masks,
)
from psro.kernels.progress import MixtureProgress, summed_mixtures


def liars_dice_sums(game, seats: list[list[tuple[object, float]]],
                    progress: MixtureProgress | None = None) -> KernelSums:
    """Both players' mixtures ``seats`` in ``liars_dice``, each member's reach swept forward
    through the public tree and summed with its weight: per player its reach to each "Liar"
    call, per public state and hand (``progress``: where an interrupted evaluation
    resumes)."""
    rules = LiarsDiceRules.of(game)
    states, hands, bids = 2 ** rules.num_bids, rules.num_hands, rules.num_bids
    seconds = {"rules": 0.0, "tabularise": 0.0, "walk": 0.0}

    def add_member(player: int, policy, weight: float, total: np.ndarray) -> int:
        reach = np.zeros((states, hands))
        reach[0] = 1.0
        own = np.zeros((states, hands))
        asked = 0
        chunks = [(lo, min(states, lo + CHUNK)) for lo in range(0, states, CHUNK)]
        makers = [lambda lo=lo, hi=hi: rules.batch(acting_masks(lo, hi, player), player, game)
                  for lo, hi in chunks]
        start = time.perf_counter()
        for (lo, hi), probs in zip(chunks, asked_in_order(batch_probs, policy, makers),
                                   strict=True):
            probs = probs.reshape(-1, hands, bids + 1)
            seconds["tabularise"] += time.perf_counter() - start
            asked += probs.shape[0] * hands
            start = time.perf_counter()
            _propagate(lo, hi, player, bids, reach, own, probs)
            seconds["walk"] += time.perf_counter() - start
            start = time.perf_counter()
        total += weight * own
        return asked

    terminal, asked = summed_mixtures(seats, progress, lambda player: (states, hands),
                                      add_member)
    return KernelSums(terminal, seconds, asked, (rules,))


def liars_dice_exploitability(game, seats: list[list[tuple[object, float]]],
                              progress: MixtureProgress | None = None) -> KernelExploitability:
    """:func:`psro.kernels.exact.exact_exploitability` of ``liars_dice`` (``progress``: where
    an interrupted evaluation resumes, :class:`~psro.kernels.progress.MixtureProgress`)."""
    held = liars_dice_sums(game, seats, progress)
    (rules,), terminal, seconds = held.walked, held.sums, held.seconds
    states, hands, bids = 2 ** rules.num_bids, rules.num_hands, rules.num_bids
    start = time.perf_counter()
    value = np.zeros((states, hands))
    best_values, best_actions = np.zeros(2), []
    for player in range(2):
        best = np.full((states, hands), -1, dtype=np.int8)
        best_values[player] = _best_response(player, bids, terminal[1 - player],
                                             rules.true_bid, rules.hand_probs, value, best)
        best_actions.append(best)
    v0 = _policy_value(bids, terminal[0], terminal[1], rules.true_bid, rules.hand_probs)
    seconds["walk"] += time.perf_counter() - start
    values = np.array([v0, -v0])
    gains = best_values - values
    nash_conv = float(gains.sum())
    if progress is not None:
        progress.finished()
    return KernelExploitability(nash_conv, nash_conv / 2, gains, values, best_values,
                                best_actions, seconds, held.information_sets)


def liars_dice_cross_values(own: KernelSums, others: list[KernelSums]
                            ) -> list[tuple[float, float]]:
    """Per mixture pair of ``others`` (each from :func:`liars_dice_sums` of the same game as
    ``own``): its player 0's exact expected return against ``own``'s player 1, and its player
    1's against ``own``'s player 0 (the game is zero-sum)."""
    (rules,) = own.walked
    start = time.perf_counter()
    out = []
    for other in others:
        first = _policy_value(rules.num_bids, other.sums[0], own.sums[1], rules.true_bid,
                              rules.hand_probs)
        second = -_policy_value(rules.num_bids, own.sums[0], other.sums[1], rules.true_bid,
                                rules.hand_probs)
        out.append((float(first), float(second)))
    own.seconds["walk"] += time.perf_counter() - start
    return out
