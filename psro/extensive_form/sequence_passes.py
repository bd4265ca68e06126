"""The passes of a CFR-family iteration on one player's *sequences*: flat arrays with one entry
per sequence. Every CFR-family solver of the toolkit
(:class:`~psro.extensive_form.restricted_cfr.RestrictedCFR`, and through it the whole-game
solvers of :mod:`psro.extensive_form.tabular_cfr`) iterates on them, and ``xdo``'s improving
actions (:mod:`psro.extensive_form.improving`) are read from them: a player's regrets, its
current policy (the probability of each sequence's last action at its information set) and its
realization plan are arrays (num_sequences,), entry 0 the empty sequence; leaf arrays are
(num_leaves,) or, prepared on part of the tree, of the prepared leaves.

Indexing by sequence leaves out the padding of (num_infosets, num_actions) arrays: liar's dice
has 13 actions and two sequences an information set on average, so a padded array would hold
6.5 entries for each sequence. A backward pass visits the information sets of a level in the
order :meth:`SequenceFormGame.best_response` walks them, each one's actions in action order.
Policies cross to and from (num_infosets, num_actions) action probabilities by
:func:`by_sequence`, :func:`policy_array` and, from a realization plan, :func:`behaviour`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from psro.extensive_form.reached import passed, sequences_of
from psro.extensive_form.sequence_form import SequenceFormGame


class Level(NamedTuple):
    """The information sets of one depth that a pass visits, in the order it visits them."""

    infosets: np.ndarray
    """The information sets (the order of :meth:`SequenceFormGame.best_response`)."""
    parents: np.ndarray
    """The sequence each information set hangs from."""
    seqs: np.ndarray
    """Their allowed sequences, information set by information set, each in action order."""
    slot: np.ndarray
    """For each of ``seqs``, its information set's position in ``infosets``."""


class SequencePlayer(NamedTuple):
    """One player's restricted game indexed by sequence, built once a restricted game
    (:func:`sequence_player`). Prepared on the leaves the other players' restricted play
    reaches, ``returns`` and ``leaf_seqs`` are of those leaves and the levels hold the
    information sets on the way to them; every other leaf weighs 0 for the player, so each
    value, regret and policy is the one the whole tree gives."""

    infoset: np.ndarray
    """Each sequence's information set (num_sequences,); -1 at the empty sequence."""
    allowed: np.ndarray
    """Whether each sequence's last action is allowed (num_sequences,); False at 0."""
    uniform: np.ndarray
    """The uniform policy over each information set's allowed actions, by sequence."""
    returns: np.ndarray
    """The player's return at each prepared leaf times chance's reach."""
    leaf_seqs: list[np.ndarray]
    """Every player's sequence at each prepared leaf."""
    levels: list[Level]
    """The information sets a backward pass visits, deepest first."""
    plan_levels: list[tuple[np.ndarray, np.ndarray]]
    """Per depth, the sequences of allowed actions and their parents."""
    visited: np.ndarray
    """The sequences of every level, concatenated (those whose regrets an iteration
    updates)."""
    infoset_count: int
    """How many information sets the player has (visited or not)."""


def sequence_player(tree: SequenceFormGame, player: int, allowed: np.ndarray,
                    leaves: np.ndarray | None = None,
                    own: np.ndarray | None = None) -> SequencePlayer:
    """``player``'s indices for the restricted game ``allowed`` ((num_infosets, num_actions)
    booleans), on the ``leaves`` (boolean (num_leaves,): those the other players' restricted
    play reaches, :func:`~psro.extensive_form.reached.others_reach`) where given, else on the
    whole tree. ``own``: the player's sequences of allowed actions
    (:func:`~psro.extensive_form.reached.sequences_of`), where the caller has them."""
    info = tree.players[player]
    _, groups = tree._response_order(player)
    infoset, ok, uniform = allowed_by_sequence(tree, player, allowed)
    returns = tree.leaf_chance * tree.leaf_returns[player]
    leaf_seqs = list(tree.leaf_seqs)
    own = sequences_of(tree, player, allowed) if own is None else own
    if leaves is not None:
        kept = np.flatnonzero(leaves)
        returns, leaf_seqs = returns[kept], [seqs[kept] for seqs in leaf_seqs]
        reached = passed(tree, player, leaves)[1]
        groups = [g[reached[g]] for g in groups]
    first, widths = infoset_sequences(tree, player)
    levels = []
    for infosets in groups:
        seqs = sequence_ranges(first[infosets], widths[infosets])
        slot = np.repeat(np.arange(len(infosets)), widths[infosets])
        keep = ok[seqs]
        levels.append(Level(infosets, info.parent_seq[infosets], seqs[keep], slot[keep]))
    plan_levels = [(level[own[level]], info.seq_parent[level[own[level]]])
                   for level in tree._depth_levels[player]]
    visited = np.concatenate([level.seqs for level in levels]) if levels else \
        np.zeros(0, dtype=np.int64)
    return SequencePlayer(infoset, ok, uniform, returns, leaf_seqs, levels, plan_levels,
                          visited, info.num_infosets)


def allowed_by_sequence(tree: SequenceFormGame, player: int, allowed: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Three arrays by sequence of a player, for a restricted game.

    They are: the sequence's information set (-1 at the empty one); whether its last action is
    ``allowed`` ((num_infosets, num_actions) booleans; False at the empty one); and the
    uniform policy over each information set's allowed actions."""
    info = tree.players[player]
    infoset = info.seq_infoset.astype(np.int64)
    ok = np.zeros(info.num_sequences, dtype=bool)
    ok[1:] = allowed[infoset[1:], info.seq_action[1:]]
    counts = np.bincount(infoset[1:], weights=ok[1:], minlength=info.num_infosets)
    uniform = np.where(ok, 1.0 / np.maximum(counts[np.maximum(infoset, 0)], 1), 0.0)
    return infoset, ok, uniform


def infoset_sequences(tree: SequenceFormGame, player: int) -> tuple[np.ndarray, np.ndarray]:
    """Each information set's first sequence and its number of sequences, for a player.

    The walk numbers an information set's sequences one after another."""
    info = tree.players[player]
    infoset = info.seq_infoset[1:].astype(np.int64)
    return (np.searchsorted(infoset, np.arange(info.num_infosets)) + 1,
            np.bincount(infoset, minlength=info.num_infosets))


def sequence_ranges(starts: np.ndarray, widths: np.ndarray) -> np.ndarray:
    """The runs of consecutive integers that start at ``starts`` and have ``widths``.

    For each k, ``starts[k]`` up to ``starts[k] + widths[k] - 1``, the runs concatenated."""
    total = int(widths.sum())
    offsets = np.repeat(starts - np.cumsum(widths) + widths, widths)
    return offsets + np.arange(total)


def plan(prepared: SequencePlayer, probs: np.ndarray) -> np.ndarray:
    """The realization plan (num_sequences,) of the policy ``probs`` (by sequence), 0 on the
    sequences of actions not allowed."""
    out = np.zeros(len(probs))
    out[0] = 1.0
    for seqs, parents in prepared.plan_levels:
        out[seqs] = out[parents] * probs[seqs]
    return out


def leaf_values(prepared: SequencePlayer, player: int, plans: list[np.ndarray]) -> np.ndarray:
    """What each prepared leaf weighs for ``player`` (its return times chance's reach,
    ``prepared.returns``, times the other players' reach under ``plans``) summed onto
    ``player``'s sequence at the leaf (num_sequences,): what :func:`values`,
    :func:`best_response` and :func:`predicted_policy` start their backward passes from."""
    weight = prepared.returns
    for q, plan in enumerate(plans):
        if q != player:
            weight = weight * plan[prepared.leaf_seqs[q]]
    return np.bincount(prepared.leaf_seqs[player], weights=weight,
                       minlength=len(prepared.infoset))


def values(prepared: SequencePlayer, leaf_value: np.ndarray,
           probs: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """One backward pass from the leaves' values by sequence (:func:`leaf_values`, left as
    they are): each sequence's counterfactual value (num_sequences,; meaningful on
    ``prepared.visited``), each information set's value (num_infosets,), expected under
    ``probs`` (by sequence) or, without them, of a best response within the allowed actions;
    and the root's value."""
    value = leaf_value.copy()
    node = np.zeros(prepared.infoset_count)
    for level in prepared.levels:
        here = value[level.seqs]
        if probs is None:
            best = np.full(len(level.infosets), -np.inf)
            np.maximum.at(best, level.slot, here)
        else:
            best = np.bincount(level.slot, weights=here * probs[level.seqs],
                               minlength=len(level.infosets))
        node[level.infosets] = best
        np.add.at(value, level.parents, best)
    return value, node, float(value[0])


def best_response(prepared: SequencePlayer, leaf_value: np.ndarray,
                  within: np.ndarray | None = None) -> np.ndarray:
    """A deterministic best response by sequence (1 on the chosen sequences, 0 elsewhere;
    entry 0 is 1) from the leaves' values by sequence (:func:`leaf_values`): at each
    information set a level visits, the lowest action of largest value among the allowed
    sequences that are also ``within`` (booleans by sequence, where given), the deeper
    information sets answered first (:meth:`SequenceFormGame.best_response`'s rule)."""
    value = leaf_value.copy()
    probs = np.zeros(len(value))
    probs[0] = 1.0
    for level in prepared.levels:
        here = value[level.seqs]
        if within is not None:
            here = np.where(within[level.seqs], here, -np.inf)
        best = np.full(len(level.infosets), -np.inf)
        np.maximum.at(best, level.slot, here)
        hits = np.flatnonzero(here == best[level.slot])
        _, first = np.unique(level.slot[hits], return_index=True)
        probs[level.seqs[hits[first]]] = 1.0
        np.add.at(value, level.parents, best)
    return probs


def instantaneous_regrets(prepared: SequencePlayer, value: np.ndarray,
                          node: np.ndarray) -> np.ndarray:
    """Each sequence's counterfactual regret (num_sequences,): its value less its information
    set's, on the visited sequences; 0 elsewhere."""
    out = np.zeros(len(value))
    seqs = prepared.visited
    out[seqs] = value[seqs] - node[prepared.infoset[seqs]]
    return out


def regret_matching(prepared: SequencePlayer, regrets: np.ndarray) -> np.ndarray:
    """Regret matching+ by sequence: the allowed positive regrets normalised at each
    information set; uniform over its allowed actions where none is positive."""
    return matched(regrets, prepared.infoset, prepared.allowed, prepared.uniform,
                   prepared.infoset_count)


def matched(regrets: np.ndarray, infoset: np.ndarray, allowed: np.ndarray,
            uniform: np.ndarray, num_infosets: int) -> np.ndarray:
    """Regret matching+ by sequence from the arrays of :func:`allowed_by_sequence`.

    It is :func:`regret_matching` on the whole tree, where no :class:`SequencePlayer` is
    prepared."""
    positive = np.where(allowed, np.maximum(regrets, 0.0), 0.0)
    infoset = np.maximum(infoset, 0)
    total = np.bincount(infoset[1:], weights=positive[1:], minlength=num_infosets)[infoset]
    out = np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform)
    out[0] = 1.0
    return out


def predicted_policy(prepared: SequencePlayer, regrets: np.ndarray, probs: np.ndarray,
                     leaf_value: np.ndarray) -> np.ndarray:
    """Predictive regret matching+ (a new policy by sequence) from the accumulated
    ``regrets`` and the current ``probs``, with the leaves' values by sequence
    (:func:`leaf_values`, left as they are) as the prediction, bottom-up
    (:mod:`psro.extensive_form.cfr_variants`); information sets no level visits keep their
    policy."""
    value = leaf_value.copy()
    probs = probs.copy()
    for level in prepared.levels:
        seqs, slot, width = level.seqs, level.slot, len(level.infosets)
        predicted = value[seqs]
        expected = np.bincount(slot, weights=predicted * probs[seqs], minlength=width)
        gain = np.maximum(regrets[seqs] + predicted - expected[slot], 0.0)
        total = np.bincount(slot, weights=gain, minlength=width)[slot]
        probs[seqs] = np.where(total > 0, gain / np.where(total > 0, total, 1.0),
                               prepared.uniform[seqs])
        np.add.at(value, level.parents,
                  np.bincount(slot, weights=predicted * probs[seqs], minlength=width))
    return probs


def by_sequence(tree: SequenceFormGame, player: int, policy: np.ndarray) -> np.ndarray:
    """Action probabilities (num_infosets, num_actions) as a policy by sequence (the inverse
    of :func:`policy_array`; entry 0 is 1)."""
    info = tree.players[player]
    out = np.ones(info.num_sequences)
    out[1:] = policy[info.seq_infoset[1:], info.seq_action[1:]]
    return out


def policy_array(tree: SequenceFormGame, player: int, probs: np.ndarray) -> np.ndarray:
    """A policy by sequence as action probabilities (num_infosets, num_actions)."""
    info = tree.players[player]
    out = np.zeros((info.num_infosets, tree.num_actions))
    out[info.seq_infoset[1:], info.seq_action[1:]] = probs[1:]
    return out


def behaviour(tree: SequenceFormGame, player: int, plan: np.ndarray,
              allowed: np.ndarray) -> np.ndarray:
    """Action probabilities (num_infosets, num_actions) of a realization plan (or any
    positive multiple of one); uniform over the allowed actions (booleans (num_infosets,
    num_actions)) where the plan does not reach (its reach or its actions' mass at most
    1e-12 of the root's)."""
    info = tree.players[player]
    seq_table, _ = tree._response_order(player)
    reach = plan[info.parent_seq][:, None]
    mass = np.where(seq_table >= 0, plan[np.maximum(seq_table, 0)], 0.0)
    total = mass.sum(axis=1, keepdims=True)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)
    floor = 1e-12 * max(float(plan[0]), 1e-300)
    ok = (reach > floor) & (total > floor)
    return np.where(ok, mass / np.where(total > 0, total, 1.0), uniform)


__all__ = ["Level", "SequencePlayer", "allowed_by_sequence", "behaviour", "best_response",
           "by_sequence", "infoset_sequences", "instantaneous_regrets", "leaf_values",
           "matched", "plan", "policy_array", "predicted_policy", "regret_matching",
           "sequence_player", "sequence_ranges", "values"]
