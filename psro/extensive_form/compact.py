"""The part of a two-player walked game that a restricted game's players reach, renumbered into
small flat arrays (:class:`CompactGame`) that the compiled CFR-family kernel
(:mod:`psro.extensive_form.cfr_kernel`) iterates on.

A restricted game's equilibrium and values depend only on the leaves both restricted players
reach (:func:`psro.extensive_form.reached.live`); ``xdo``'s restricted games reach 0.02-5% of
the leaves of liar's dice and goofspiel 6 growing by improving actions. Each player's
information sets on the way to those leaves are numbered deepest first (the order of
:meth:`SequenceFormGame.best_response`), and each one's sequences follow one another in action
order, so one forward loop over the information sets is a backward pass over the player's
tree, and one loop backwards computes a realization plan. The restricted game that allows every
legal action is the whole game: its compact form is the whole tree renumbered.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from psro.extensive_form.double_oracle_kernel import restricted_part
from psro.extensive_form.reached import live, passed
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_passes import infoset_sequences, sequence_ranges


class CompactPlayer(NamedTuple):
    """One player's part of a :class:`CompactGame`. Compact sequence 0 is the empty
    sequence."""

    sequences: np.ndarray
    """The tree's sequence of each compact sequence (num_compact_sequences,)."""
    infosets: np.ndarray
    """The tree's information set of each compact information set, deepest first."""
    start: np.ndarray
    """The first compact sequence of each compact information set."""
    end: np.ndarray
    """One past its last."""
    parent: np.ndarray
    """The compact sequence each compact information set hangs from."""


class CompactGame(NamedTuple):
    """The part of a two-player walked game a restricted game reaches (module docstring)."""

    players: tuple[CompactPlayer, CompactPlayer]
    leaf_seqs: tuple[np.ndarray, np.ndarray]
    """Each player's compact sequence at each kept leaf."""
    leaf_weights: tuple[np.ndarray, np.ndarray]
    """Each player's return at each kept leaf times chance's reach."""
    leaves: np.ndarray
    """The tree's leaves kept (indices)."""


def compact_game(tree: SequenceFormGame, allowed: list[np.ndarray]) -> CompactGame:
    """The part of the two-player ``tree`` that the restricted game ``allowed`` (each player's
    boolean (num_infosets, num_actions), an allowed action at every information set) reaches,
    renumbered (module docstring)."""
    if tree.num_players != 2:
        raise ValueError(f"a compact game has two players; {tree.name!r} has "
                         f"{tree.num_players}")
    leaves = live(tree, allowed).leaves
    players, maps = [], []
    for p in range(2):
        player, renumber = _compact_player(tree, p, leaves)
        players.append(player)
        maps.append(renumber)
    kept = np.flatnonzero(leaves)
    seqs = tuple(maps[p][tree.leaf_seqs[p][kept]] for p in range(2))
    weights = tuple(np.ascontiguousarray(tree.leaf_chance[kept] * tree.leaf_returns[p][kept])
                    for p in range(2))
    return CompactGame(tuple(players), seqs, weights, kept)


def by_compact_sequence(tree: SequenceFormGame, game: CompactGame, allowed: list[np.ndarray]
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Each player's allowed actions ``allowed`` (booleans (num_infosets, num_actions) of the
    two-player ``tree``) as booleans by ``game``'s compact sequence, entry 0 (the empty
    sequence) True: the form :func:`restrict` takes."""
    kept = []
    for p, player in enumerate(game.players):
        info, seqs = tree.players[p], player.sequences[1:]
        kept.append(np.concatenate([[True], allowed[p][info.seq_infoset[seqs],
                                                       info.seq_action[seqs]]]))
    return kept[0], kept[1]


def restriction_buffers(game: CompactGame) -> tuple[np.ndarray, ...]:
    """Buffers :func:`restrict` can write a restricted game of ``game`` into: one entry per
    leaf of ``game`` for the leaves kept, each player's sequences at them and their weights.
    They are filled here, so that their memory is mapped before the first restriction (on
    Leduc with 13 ranks, fresh pages added 18 ms to a double oracle's first 0.35 s)."""
    size = len(game.leaves)
    return (np.full(size, -1, dtype=np.int64), np.full(size, -1, dtype=np.int64),
            np.full(size, -1, dtype=np.int64), np.full(size, 0.0), np.full(size, 0.0))


def restrict(game: CompactGame, allowed: tuple[np.ndarray, np.ndarray],
             buffers: tuple[np.ndarray, ...] | None = None) -> CompactGame:
    """The compact part of a restricted game of ``game``: ``allowed`` holds each player's
    allowed actions as booleans by ``game``'s compact sequence (entry 0, the empty sequence,
    True; an allowed action at every information set the restricted game reaches). Equal to
    :func:`compact_game` of the same restricted game (its arrays index the tree, as
    :func:`compact_game`'s do), in one compiled pass over ``game`` instead of numpy passes over
    the tree: on liar's dice 0.3-0.9 ms against 3-5 ms. Its leaf arrays are views into
    ``buffers`` (:func:`restriction_buffers` of ``game``; new ones where None), which the next
    restriction into the same buffers overwrites: a caller that restricts again and again
    reuses the memory (on Leduc with 13 ranks, fresh memory for 0.56 million leaves costs
    more than the pass)."""
    if buffers is None:
        buffers = restriction_buffers(game)
    first, second = game.players
    parts = restricted_part(*game.leaf_seqs, *game.leaf_weights, *allowed, first.start,
                            first.end, first.parent, second.start, second.end, second.parent,
                            game.leaves, *buffers)
    players = tuple(CompactPlayer(whole.sequences[part[0]], whole.infosets[part[1]], *part[2:5])
                    for whole, part in ((first, parts[1:6]), (second, parts[6:11])))
    leaves, seqs0, seqs1, weights0, weights1 = (buffer[:parts[0]] for buffer in buffers)
    return CompactGame(players, (seqs0, seqs1), (weights0, weights1), leaves)


def _compact_player(tree: SequenceFormGame, p: int, leaves: np.ndarray
                    ) -> tuple[CompactPlayer, np.ndarray]:
    info = tree.players[p]
    reached, infosets_reached = passed(tree, p, leaves)
    _, groups = tree._response_order(p)
    order = np.concatenate([g[infosets_reached[g]] for g in groups]) if groups else \
        np.zeros(0, dtype=np.int64)
    first, widths = infoset_sequences(tree, p)
    counts = widths[order]
    candidates = sequence_ranges(first[order], counts)
    keep = reached[candidates]
    sequences = np.concatenate([[0], candidates[keep]]).astype(np.int64)
    owner = np.repeat(np.arange(len(order)), counts)[keep]
    kept_counts = np.bincount(owner, minlength=len(order))
    end = np.cumsum(kept_counts) + 1
    renumber = np.full(info.num_sequences, -1, dtype=np.int64)
    renumber[sequences] = np.arange(len(sequences))
    parent = renumber[info.parent_seq[order]]
    return CompactPlayer(sequences, order.astype(np.int64), end - kept_counts, end,
                         parent), renumber


__all__ = ["CompactGame", "CompactPlayer", "by_compact_sequence", "compact_game", "restrict",
           "restriction_buffers"]
