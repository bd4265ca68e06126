"""Exact exploitability in liar's dice by a walk of its public tree
(:mod:`psro.kernels.liars_dice`): each member's reach swept forward, the best responses
backward."""

from __future__ import annotations

import time

import numpy as np

from psro.kernels.asking import asked_in_order, batch_probs
from psro.kernels.base import KernelExploitability
from psro.kernels.liars_dice import (
    CHUNK,
    LiarsDiceRules,
    _best_response,
    _policy_value,
    _propagate,
    acting_masks,
)
from psro.kernels.progress import MixtureProgress, summed_mixtures


def liars_dice_exploitability(game, seats: list[list[tuple[object, float]]],
                              progress: MixtureProgress | None = None) -> KernelExploitability:
    """:func:`psro.kernels.exact.exact_exploitability` of ``liars_dice`` (``progress``: where
    an interrupted evaluation resumes, :class:`~psro.kernels.progress.MixtureProgress`)."""
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
                                best_actions, seconds, asked)
