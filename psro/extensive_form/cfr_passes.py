"""Vectorised passes over one player's walked sequence form on (num_infosets, num_actions)
arrays: the player's indices prepared once, the leaves' weights against the other players, the
backward pass of counterfactual values, and a plan's behavioural policy. ``xdo``'s improving
actions and restricted best responses (:mod:`psro.extensive_form.improving`) run them; the
CFR-family solvers iterate on flat arrays by sequence (:mod:`psro.extensive_form.sequence_passes`)
and share :func:`leaf_weights` and :func:`behaviour`.

Arrays: a policy is (num_infosets, num_actions) of one player as the tree numbers them; a
realization plan is (num_sequences,) with the empty sequence at 0; leaf arrays are
(num_leaves,).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame


class PreparedPlayer(NamedTuple):
    """One player's game, indexed once: what every backward pass would otherwise look up
    again. ``levels``: per group of information sets (deepest first, as
    :func:`counterfactual_values` walks them), the information sets, the sequence each action
    leads to (0 where illegal), the legal and allowed actions and the sequences the
    information sets hang from; ``returns``: the player's return at each leaf times chance's
    reach; ``leaf_seqs``: every player's sequence at each leaf."""

    allowed: np.ndarray
    returns: np.ndarray
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    leaf_seqs: list[np.ndarray]


def prepare_player(tree: SequenceFormGame, player: int, allowed: np.ndarray) -> PreparedPlayer:
    """``player``'s indices for the game whose allowed actions are ``allowed``
    ((num_infosets, num_actions) booleans), as every pass uses them (:class:`PreparedPlayer`)."""
    info = tree.players[player]
    seq_table, groups = tree._response_order(player)
    levels = []
    for infosets in groups:
        seqs = seq_table[infosets]
        levels.append((infosets, np.maximum(seqs, 0), (seqs >= 0) & allowed[infosets],
                       info.parent_seq[infosets]))
    return PreparedPlayer(allowed, tree.leaf_chance * tree.leaf_returns[player], levels,
                          list(tree.leaf_seqs))


def leaf_weights(tree: SequenceFormGame, player: int, plans: list[np.ndarray],
                 returns: np.ndarray, leaf_seqs: list[np.ndarray] | None = None) -> np.ndarray:
    """What each leaf weighs for ``player``: ``returns`` (its return times chance's reach)
    times the other players' reach under ``plans``; of the leaves whose sequences are
    ``leaf_seqs`` (a prepared player's), by default every leaf of ``tree``."""
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


__all__ = ["PreparedPlayer", "behaviour", "counterfactual_values", "leaf_weights",
           "prepare_player"]
