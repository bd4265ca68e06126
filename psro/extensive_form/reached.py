"""The part of a walked game that a restricted game's players reach: the leaves at which every
player's restricted play can arrive (:func:`live`), and the sequences and information sets on
the way. A restricted game's equilibrium and values depend on that part alone, so its LP
(:mod:`psro.extensive_form.sequence_lp`) works on it only (``xdo``'s restricted games reach
0.02-5% of the leaves of liar's dice and goofspiel 6 growing by improving actions, up to 31%
of liar's dice's growing by responses). A player's counterfactual values also count the
information sets its own restricted play does not reach, so its CFR-family passes
(:mod:`psro.extensive_form.sequence_passes`) keep every leaf the *other* players reach
(:func:`others_reach`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame


class LiveGame(NamedTuple):
    """What of a walked game a restricted game's players reach (:func:`live`)."""

    leaves: np.ndarray
    """Boolean (num_leaves,): the leaves reached when every player takes only allowed
    actions."""
    sequences: list[np.ndarray]
    """Per player, a boolean per sequence: the empty sequence and each sequence of allowed
    actions that leads to such a leaf."""
    infosets: list[np.ndarray]
    """Per player, boolean (num_infosets,): the information sets such a leaf passes."""


def allowed_sequences(tree: SequenceFormGame, allowed: list[np.ndarray]) -> list[np.ndarray]:
    """Per player, a boolean per sequence: whether all its actions are ``allowed`` (each
    player's boolean (num_infosets, num_actions)); the empty sequence is."""
    return [sequences_of(tree, p, a) for p, a in enumerate(allowed)]


def sequences_of(tree: SequenceFormGame, player: int, allowed: np.ndarray) -> np.ndarray:
    """A boolean per sequence of ``player``: whether all its actions are ``allowed``
    (booleans (num_infosets, num_actions)); the empty sequence is."""
    uniform = allowed / np.maximum(allowed.sum(axis=1, keepdims=True), 1)
    return tree.realization_plan(player, uniform) > 0


def others_reach(tree: SequenceFormGame, allowed: list[np.ndarray],
                 fits: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Per player p, boolean (num_leaves,): the leaves at which every other player's sequence
    has allowed actions only. Elsewhere the others' restricted play reaches the leaf with
    probability 0, so it weighs nothing in p's counterfactual values. ``fits``: the players'
    :func:`allowed_sequences`, where the caller has them."""
    if fits is None:
        fits = allowed_sequences(tree, allowed)
    reach = [fit[tree.leaf_seqs[p]] for p, fit in enumerate(fits)]
    out = []
    for p in range(tree.num_players):
        leaves = np.ones(len(tree.leaf_chance), dtype=bool)
        for q, mask in enumerate(reach):
            if q != p:
                leaves &= mask
        out.append(leaves)
    return out


def passed(tree: SequenceFormGame, player: int, leaves: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """``player``'s sequences (a boolean per sequence: the empty one and those on the way to
    one of ``leaves``, a boolean (num_leaves,)) and information sets (boolean (num_infosets,))
    on the way to ``leaves``."""
    info = tree.players[player]
    reached = np.bincount(tree.leaf_seqs[player][leaves], minlength=info.num_sequences) > 0
    for level in reversed(tree._depth_levels[player]):
        np.logical_or.at(reached, info.seq_parent[level], reached[level])
    reached[0] = True
    infosets = np.zeros(info.num_infosets, dtype=bool)
    infosets[info.seq_infoset[1:][reached[1:]]] = True
    return reached, infosets


def live(tree: SequenceFormGame, allowed: list[np.ndarray]) -> LiveGame:
    """The part of ``tree`` that the restricted game ``allowed`` (each player's boolean
    (num_infosets, num_actions)) reaches: from every information set it reaches, each allowed
    action leads on to a leaf it reaches (every information set allows an action). A leaf
    left out has a sequence with an action some player may not take, so every policy of the
    restricted game reaches it with probability 0."""
    leaves = np.ones(len(tree.leaf_chance), dtype=bool)
    for p, fit in enumerate(allowed_sequences(tree, allowed)):
        leaves &= fit[tree.leaf_seqs[p]]
    parts = [passed(tree, p, leaves) for p in range(tree.num_players)]
    return LiveGame(leaves, [seqs for seqs, _ in parts], [infosets for _, infosets in parts])


__all__ = ["LiveGame", "allowed_sequences", "live", "others_reach", "passed", "sequences_of"]
