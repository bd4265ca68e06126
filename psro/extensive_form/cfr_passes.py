"""The vectorised passes over one player's walked sequence form that every CFR-family solver
of the toolkit runs each iteration (:mod:`psro.extensive_form.restricted_cfr`,
:mod:`psro.extensive_form.tabular_cfr`): regret matching, the player's indices prepared once
for a (restricted) game, its realization plan, the leaves' weights against the other players,
the backward pass of counterfactual values, and a plan's behavioural policy.

Arrays: a policy is (num_infosets, num_actions) of one player as the tree numbers them; a
realization plan is (num_sequences,) with the empty sequence at 0; leaf arrays are
(num_leaves,).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from psro.extensive_form.reached import passed, sequences_of
from psro.extensive_form.sequence_form import SequenceFormGame


def regret_matching(regrets: np.ndarray, allowed: np.ndarray,
             uniform: np.ndarray | None = None) -> np.ndarray:
    """Regret matching+: positive regrets normalised; uniform over the allowed actions where
    none is positive (``uniform``: that policy, where the caller has it already)."""
    positive = np.where(allowed, np.maximum(regrets, 0.0), 0.0)
    total = positive.sum(axis=1, keepdims=True)
    if uniform is None:
        uniform = allowed / allowed.sum(axis=1, keepdims=True)
    return np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform)


class PreparedPlayer(NamedTuple):
    """One player's restricted game, indexed once a call: what every iteration's backward
    pass and realization plan would otherwise look up again. ``levels``: per group of
    information sets (deepest first, as :func:`counterfactual_values` walks them), the
    information sets, the sequence each action leads to (0 where illegal), the legal and
    allowed actions and the sequences the information sets hang from; ``returns``: the
    player's return at each leaf times chance's reach; ``plan_levels``: per depth, the
    sequences, their parents and their (information set, action) as a flat index of the
    policy array; ``leaf_seqs``: every player's sequence at each leaf.

    Prepared on the leaves the other players' restricted play reaches
    (:func:`~psro.extensive_form.reached.others_reach`), ``returns`` and ``leaf_seqs`` are of
    those leaves, the levels of the information sets on the way to them, and a plan is
    computed on the sequences of allowed actions only (0 elsewhere, as a policy of the
    restricted game gives them): every other leaf weighs 0 for the player, so every value,
    regret and policy is the same."""

    allowed: np.ndarray
    uniform: np.ndarray
    returns: np.ndarray
    num_sequences: int
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    plan_levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
    leaf_seqs: list[np.ndarray]


def prepare_player(tree: SequenceFormGame, player: int, allowed: np.ndarray,
                   leaves: np.ndarray | None = None) -> PreparedPlayer:
    """``player``'s indices for the restricted game ``allowed`` ((num_infosets, num_actions)
    booleans), as every iteration on that game uses them (:class:`PreparedPlayer`); on the
    ``leaves`` (boolean (num_leaves,): those the other players' restricted play reaches,
    :func:`~psro.extensive_form.reached.others_reach`) where given, else on the whole tree."""
    info = tree.players[player]
    seq_table, groups = tree._response_order(player)
    returns = tree.leaf_chance * tree.leaf_returns[player]
    leaf_seqs = list(tree.leaf_seqs)
    plan_levels = tree._depth_levels[player]
    if leaves is not None:
        kept = np.flatnonzero(leaves)
        returns, leaf_seqs = returns[kept], [seqs[kept] for seqs in leaf_seqs]
        infosets = passed(tree, player, leaves)[1]
        groups = [g[infosets[g]] for g in groups]
        own = sequences_of(tree, player, allowed)
        plan_levels = [level[own[level]] for level in plan_levels]
    levels = []
    for infosets in groups:
        seqs = seq_table[infosets]
        levels.append((infosets, np.maximum(seqs, 0), (seqs >= 0) & allowed[infosets],
                       info.parent_seq[infosets]))
    plan_levels = [(level, info.seq_parent[level],
                    info.seq_infoset[level] * tree.num_actions + info.seq_action[level])
                   for level in plan_levels]
    return PreparedPlayer(allowed, allowed / allowed.sum(axis=1, keepdims=True), returns,
                          info.num_sequences, levels, plan_levels, leaf_seqs)


def plan_of(prepared: PreparedPlayer, probs: np.ndarray) -> np.ndarray:
    """:meth:`SequenceFormGame.realization_plan` on prepared indices (the same numbers; on a
    prepared part of the game, 0 outside it)."""
    plan = np.zeros(prepared.num_sequences)
    plan[0] = 1.0
    flat = probs.ravel()
    for level, parents, actions in prepared.plan_levels:
        plan[level] = plan[parents] * flat[actions]
    return plan


def leaf_weights(tree: SequenceFormGame, player: int, plans: list[np.ndarray],
                 returns: np.ndarray, leaf_seqs: list[np.ndarray] | None = None) -> np.ndarray:
    """What each leaf weighs for ``player``: ``returns`` (its return times chance's reach)
    times the other players' reach under ``plans``; of the leaves whose sequences are
    ``leaf_seqs`` (a :class:`PreparedPlayer`'s), by default every leaf of ``tree``."""
    leaf_seqs = tree.leaf_seqs if leaf_seqs is None else leaf_seqs
    weight = returns
    for q, plan in enumerate(plans):
        if q != player:
            weight = weight * plan[leaf_seqs[q]]
    return weight


def counterfactual_values(tree: SequenceFormGame, player: int, prepared: PreparedPlayer,
                          weight: np.ndarray, probs: np.ndarray | None = None,
                          within: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray, float]:
    """One backward pass over ``player``'s information sets (deepest first, as
    :meth:`SequenceFormGame.best_response` does) given the weights of ``prepared``'s leaves
    (:func:`leaf_weights`): the counterfactual
    values (num_infosets, num_actions), -inf where not allowed (by ``prepared`` and, where
    given, by the booleans ``within`` (num_infosets, num_actions) too); each information set's
    value (num_infosets,), expected under ``probs`` or, without them, of a best response
    within those actions; and the root's value."""
    info = tree.players[player]
    value = np.bincount(prepared.leaf_seqs[player], weights=weight,
                        minlength=info.num_sequences)
    cf = np.full((info.num_infosets, tree.num_actions), -np.inf)
    node = np.zeros(info.num_infosets)
    for infosets, seqs, ok, parents in prepared.levels:
        if within is not None:
            ok = ok & within[infosets]
        values = np.where(ok, value[seqs], -np.inf)
        cf[infosets] = values
        if probs is None:
            here = values.max(axis=1)
        else:
            here = np.sum(np.where(ok, values, 0.0) * probs[infosets], axis=1)
        node[infosets] = here
        np.add.at(value, parents, here)
    return cf, node, float(value[0])


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


__all__ = ["PreparedPlayer", "behaviour", "counterfactual_values", "leaf_weights", "plan_of",
           "prepare_player", "regret_matching"]
