"""Compiled (numba) CFR-family iterations on a :class:`~psro.extensive_form.compact.CompactGame`:
the rules of :mod:`psro.extensive_form.cfr_variants` (CFR+, linear and discounted CFR,
predictive CFR+ with its bottom-up prediction), alternating updates as
:class:`~psro.extensive_form.restricted_cfr.RestrictedCFR` runs them, one fused loop per pass
instead of a numpy call per level. Arrays are by compact sequence (entry 0 the empty
sequence): regrets, the current policy (the probability of each sequence's last action),
its realization plan and the weighted sum of the iterates' plans.

The numbers are :class:`RestrictedCFR`'s on the same restricted game, to rounding (sums are
taken in another order).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def leaf_values(out, own_seqs, other_seqs, weights, other_plan):
    """A player's counterfactual value of each of its sequences at the leaves, into ``out``:
    the leaves' ``weights`` (return times chance's reach) times the opponent's realization
    plan ``other_plan``, summed by the player's sequence."""
    out[:] = 0.0
    for z in range(len(weights)):
        out[own_seqs[z]] += weights[z] * other_plan[other_seqs[z]]


@njit(cache=True)
def _plan(plan, probs, start, end, parent):
    plan[0] = 1.0
    for k in range(len(start) - 1, -1, -1):
        reach = plan[parent[k]]
        for s in range(start[k], end[k]):
            plan[s] = reach * probs[s]


@njit(cache=True)
def complete_sums(sums, probs, start, end, parent):
    """Complete ``sums``, a weighted sum of realization plans (by compact sequence) taken over a
    smaller restricted game, into one of the current game: at each information set whose parent
    sequence it weighs but whose actions it does not (one the smaller game's players never
    reached), the parent's weight spread by ``probs`` (shallowest first, so deeper ones see
    their parent's). New actions at information sets it weighs keep 0."""
    for k in range(len(start) - 1, -1, -1):
        total = 0.0
        for s in range(start[k], end[k]):
            total += sums[s]
        if total == 0.0 and sums[parent[k]] > 0.0:
            for s in range(start[k], end[k]):
                sums[s] = sums[parent[k]] * probs[s]


@njit(cache=True)
def matched(regrets, start, end):
    """Regret matching on ``regrets`` (by compact sequence): each information set's positive
    regrets normalised, uniform where none is positive; entry 0 is 1."""
    probs = np.ones(len(regrets))
    for k in range(len(start)):
        total = 0.0
        for s in range(start[k], end[k]):
            total += regrets[s] if regrets[s] > 0.0 else 0.0
        for s in range(start[k], end[k]):
            if total > 0.0:
                probs[s] = (regrets[s] if regrets[s] > 0.0 else 0.0) / total
            else:
                probs[s] = 1.0 / (end[k] - start[k])
    return probs


@njit(cache=True)
def plan_of(probs, start, end, parent):
    """The realization plan of the policy ``probs`` (by compact sequence)."""
    plan = np.empty(len(probs))
    _plan(plan, probs, start, end, parent)
    return plan


@njit(cache=True)
def _update(t, own_seqs, other_seqs, weights, other_plan, start, end, parent,
            regrets, probs, plan, plan_sum, value, predicted,
            plus, alpha, beta, gamma, predictive):
    """One player's update at iteration ``t`` (module docstring); ``alpha < 0``: not
    discounted."""
    leaf_values(value, own_seqs, other_seqs, weights, other_plan)
    if predictive:
        predicted[:] = value
    up = t ** alpha / (t ** alpha + 1.0) if alpha >= 0 else 1.0
    down = t ** beta / (t ** beta + 1.0) if alpha >= 0 else 1.0
    for k in range(len(start)):
        node = 0.0
        for s in range(start[k], end[k]):
            node += probs[s] * value[s]
        for s in range(start[k], end[k]):
            r = regrets[s] + value[s] - node
            if plus and r < 0.0:
                r = 0.0
            if alpha >= 0:
                r *= up if r >= 0.0 else down
            regrets[s] = r
        value[parent[k]] += node
    weight = float(t) ** gamma
    for s in range(len(plan)):
        plan_sum[s] += weight * plan[s]
    expected = 0.0
    for k in range(len(start)):
        a, b = start[k], end[k]
        if predictive:
            expected = 0.0
            for s in range(a, b):
                expected += predicted[s] * probs[s]
        total = 0.0
        for s in range(a, b):
            gain = regrets[s] + predicted[s] - expected if predictive else regrets[s]
            gain = gain if gain > 0.0 else 0.0
            probs[s] = gain
            total += gain
        for s in range(a, b):
            probs[s] = probs[s] / total if total > 0.0 else 1.0 / (b - a)
        if predictive:
            mean = 0.0
            for s in range(a, b):
                mean += predicted[s] * probs[s]
            predicted[parent[k]] += mean
    _plan(plan, probs, start, end, parent)


@njit(cache=True)
def run_iterations(iterations, t, seqs0, seqs1, weights0, weights1,
                   start0, end0, parent0, start1, end1, parent1,
                   regrets0, regrets1, probs0, probs1, plan0, plan1, sum0, sum1,
                   plus, alpha, beta, gamma, predictive):
    """``iterations`` iterations from iteration ``t`` (the last one run); returns the new
    ``t``. Player 0 updates first, player 1 against player 0's new plan."""
    value0, value1 = np.empty(len(plan0)), np.empty(len(plan1))
    pred0, pred1 = np.empty(len(plan0)), np.empty(len(plan1))
    for _ in range(iterations):
        t += 1
        _update(t, seqs0, seqs1, weights0, plan1, start0, end0, parent0, regrets0, probs0,
                plan0, sum0, value0, pred0, plus, alpha, beta, gamma, predictive)
        _update(t, seqs1, seqs0, weights1, plan0, start1, end1, parent1, regrets1, probs1,
                plan1, sum1, value1, pred1, plus, alpha, beta, gamma, predictive)
    return t


@njit(cache=True)
def _best_value(value, start, end, parent):
    for k in range(len(start)):
        best = -np.inf
        for s in range(start[k], end[k]):
            if value[s] > best:
                best = value[s]
        value[parent[k]] += best
    return value[0]


@njit(cache=True)
def nash_conv(seqs0, seqs1, weights0, weights1, start0, end0, parent0, start1, end1,
              parent1, plan0, plan1):
    """The restricted game's NashConv of the players' realization plans (each normalised,
    entry 0 equal to 1): what each player's best response gains, summed."""
    value0, value1 = np.empty(len(plan0)), np.empty(len(plan1))
    leaf_values(value0, seqs0, seqs1, weights0, plan1)
    leaf_values(value1, seqs1, seqs0, weights1, plan0)
    own0, own1 = 0.0, 0.0
    for s in range(len(plan0)):
        own0 += value0[s] * plan0[s]
    for s in range(len(plan1)):
        own1 += value1[s] * plan1[s]
    best0 = _best_value(value0, start0, end0, parent0)
    best1 = _best_value(value1, start1, end1, parent1)
    return max(best0 - own0, 0.0) + max(best1 - own1, 0.0)


__all__ = ["leaf_values", "matched", "nash_conv", "plan_of", "run_iterations"]
