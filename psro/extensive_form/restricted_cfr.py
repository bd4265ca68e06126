"""CFR+ on a restricted game of the walked sequence form: XDO's restricted-game solver for
n-player and general-sum games.

The restricted game is the full tree in which player p may take only ``allowed[p][i, a]``
actions at its information set i. Every iteration updates every player in turn (alternating
updates, as CFR+ is usually run) by regret matching+ on counterfactual values, computed by
one backward pass over the player's information sets (deepest first, as
:meth:`SequenceFormGame.best_response` does, with the expectation under the current policy in
place of the maximum); the output is each player's *average* policy, weighted linearly in the
iteration (CFR+).

What it converges to: in two-player zero-sum games the average profile converges to a Nash
equilibrium of the restricted game (NashConv ``O(1/sqrt(T))`` at worst); in n-player or
general-sum games CFR is only a no-regret method: the players' time-averaged *joint* play
approaches a coarse correlated equilibrium of the restricted game, and the profile of average
policies it returns carries no equilibrium guarantee (its NashConv is what XDO measures and
reports, in the full game).

Stopping rule: every ``CHECK_EVERY`` iterations the average profile's NashConv *in the
restricted game* (best responses limited to the allowed actions) is measured, and the solver
stops once it is at or below ``tolerance`` or after ``max_iterations``.
"""

from typing import NamedTuple

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame

CHECK_EVERY = 25
"""Iterations between two measurements of the restricted NashConv."""


class RestrictedSolution(NamedTuple):
    """Average policies (one (num_infosets, num_actions) array per player), the restricted
    game's NashConv of that profile, and the CFR+ iterations run."""

    policies: list[np.ndarray]
    nash_conv: float
    iterations: int


def _backward(tree: SequenceFormGame, player: int, weight: np.ndarray, probs: np.ndarray,
              allowed: np.ndarray, best: bool) -> tuple[np.ndarray, float]:
    """Counterfactual values ``(num_infosets, num_actions)`` (-inf where not allowed) of
    ``player`` given leaf weights (chance, returns and the others' reach), and the root value:
    expected under ``probs`` (``best=False``) or of a restricted best response."""
    info = tree.players[player]
    value = np.bincount(tree.leaf_seqs[player], weights=weight, minlength=info.num_sequences)
    cf = np.full((info.num_infosets, tree.num_actions), -np.inf)
    seq_table, levels = tree._response_order(player)
    for infosets in levels:
        seqs = seq_table[infosets]
        ok = (seqs >= 0) & allowed[infosets]
        values = np.where(ok, value[np.maximum(seqs, 0)], -np.inf)
        cf[infosets] = values
        if best:
            node = values.max(axis=1)
        else:
            node = np.sum(np.where(ok, values, 0.0) * probs[infosets], axis=1)
        np.add.at(value, info.parent_seq[infosets], node)
    return cf, float(value[0])


def _leaf_weights(tree: SequenceFormGame, player: int, plans: list[np.ndarray]) -> np.ndarray:
    weight = tree.leaf_chance * tree.leaf_returns[player]
    for q, plan in enumerate(plans):
        if q != player:
            weight = weight * plan[tree.leaf_seqs[q]]
    return weight


def restricted_nash_conv(tree: SequenceFormGame, policies: list[np.ndarray],
                         allowed: list[np.ndarray]) -> float:
    """Sum over players of what a best response limited to the allowed actions gains
    against the others' ``policies`` in the restricted game."""
    plans = [tree.realization_plan(p, pi) for p, pi in enumerate(policies)]
    values = tree.expected_returns(plans)
    total = 0.0
    for p in range(tree.num_players):
        _, best = _backward(tree, p, _leaf_weights(tree, p, plans), policies[p], allowed[p],
                            best=True)
        total += max(best - float(values[p]), 0.0)
    return total


def _matched(regrets: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Regret matching+: positive regrets normalised; uniform over the allowed actions where
    none is positive."""
    positive = np.where(allowed, np.maximum(regrets, 0.0), 0.0)
    total = positive.sum(axis=1, keepdims=True)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)
    return np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform)


def solve_restricted(tree: SequenceFormGame, allowed: list[np.ndarray], tolerance: float,
                     max_iterations: int = 5000) -> RestrictedSolution:
    """CFR+ average policies of the restricted game (see the module docstring); stops at a
    restricted NashConv at or below ``tolerance`` or after ``max_iterations``."""
    n = tree.num_players
    regrets = [np.zeros(a.shape) for a in allowed]
    probs = [_matched(r, a) for r, a in zip(regrets, allowed, strict=True)]
    plan_sums = [np.zeros(tree.players[p].num_sequences) for p in range(n)]
    average, nash_conv, t = probs, np.inf, 0
    while t < max_iterations:
        t += 1
        plans = [tree.realization_plan(p, probs[p]) for p in range(n)]
        for p in range(n):  # alternating: later players answer the earlier ones' update
            cf, _ = _backward(tree, p, _leaf_weights(tree, p, plans), probs[p], allowed[p],
                              best=False)
            node = np.sum(np.where(allowed[p], cf, 0.0) * probs[p], axis=1, keepdims=True)
            regrets[p] = np.maximum(regrets[p] + np.where(allowed[p], cf - node, 0.0), 0.0)
            plan_sums[p] += t * plans[p]
            probs[p] = _matched(regrets[p], allowed[p])
            plans[p] = tree.realization_plan(p, probs[p])
        if t % CHECK_EVERY == 0 or t == max_iterations:
            average = [behaviour(tree, p, plan_sums[p], allowed[p]) for p in range(n)]
            nash_conv = restricted_nash_conv(tree, average, allowed)
            if nash_conv <= tolerance:
                break
    return RestrictedSolution(average, nash_conv, t)


def behaviour(tree: SequenceFormGame, player: int, plan: np.ndarray,
              allowed: np.ndarray) -> np.ndarray:
    """Action probabilities (num_infosets, num_actions) of a realization plan (or any
    positive multiple of one); uniform over the allowed actions where the plan does not
    reach (its reach or its actions' mass at most 1e-12 of the root's)."""
    info = tree.players[player]
    seq_table, _ = tree._response_order(player)
    reach = plan[info.parent_seq][:, None]
    mass = np.where(seq_table >= 0, plan[np.maximum(seq_table, 0)], 0.0)
    total = mass.sum(axis=1, keepdims=True)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)
    floor = 1e-12 * max(float(plan[0]), 1e-300)
    ok = (reach > floor) & (total > floor)
    return np.where(ok, mass / np.where(total > 0, total, 1.0), uniform)


__all__ = ["CHECK_EVERY", "RestrictedSolution", "behaviour", "restricted_nash_conv",
           "solve_restricted"]
