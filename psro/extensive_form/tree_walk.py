"""The one walk of a game tree that :class:`psro.extensive_form.sequence_form.SequenceFormGame` is
built from: each player's information sets and sequences numbered in discovery order, and every
terminal history as its chance probability, each player's sequence and the returns.

The walk refuses, naming the game: trees past ``max_nodes`` nodes or sequences
(:class:`GameTooLargeError`; at once, without walking, for a game whose ``min_tree_nodes()``
says it has more nodes, as a Python game may declare), information sets reached by two
own-action histories (:class:`NotPerfectRecallError`), and games that fail while walked
(:class:`games.GameError`): an error of OpenSpiel's or of a game written in Python, a state
that is not terminal without a legal action, a legal action outside the game's actions, a
chance node without outcomes, or a player to move that the game does not have.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass

import numpy as np
import pyspiel

from games.loading import GameError
from games.probe import failure
from psro.errors import GameTooLargeError, NotPerfectRecallError


@dataclass
class PlayerTree:
    """One player's information sets and sequences.

    ``keys[i]``: information-state string of infoset i; ``legal[i]``: its legal actions;
    ``parent_seq[i]``: the sequence leading to it; ``seq_of[i]``: dict action -> sequence id.
    ``seq_parent[s]``, ``seq_infoset[s]``, ``seq_action[s]`` describe sequence s >= 1.
    Infosets and sequences are numbered in discovery order, so parents come first.
    """

    keys: list[str]
    legal: list[np.ndarray]
    parent_seq: np.ndarray
    seq_of: list[dict[int, int]]
    seq_parent: np.ndarray
    seq_infoset: np.ndarray
    seq_action: np.ndarray
    seq_depth: np.ndarray

    @property
    def num_infosets(self) -> int:
        """Number of information sets."""
        return len(self.keys)

    @property
    def num_sequences(self) -> int:
        """Number of sequences (the empty sequence included)."""
        return len(self.seq_parent)


_EXCEEDED: dict[str, int] = {}
"""Game string -> the largest ``max_nodes`` its walk has exceeded in this process: a later walk
with that limit or a lower one is refused at once (a game too large to walk used to be walked
up to the limit again by every run: 16 s for phantom tic-tac-toe at 2,000,000 nodes)."""


def walk_tree(game: pyspiel.Game, max_nodes: int, name: str) -> TreeWalk:
    """Walk ``game`` once (see the module docstring for what is refused); a game this process
    found larger than ``max_nodes`` (or a higher limit) before is refused without a walk."""
    if not game.get_type().provides_information_state_string:
        raise GameTooLargeError(f"{name} provides no information-state strings, so its tree "
                                f"cannot be used for exact evaluation")
    declared = getattr(game, "min_tree_nodes", None)  # a game may say how large it is at least
    least = declared() if callable(declared) else 0
    if least > max_nodes:
        raise GameTooLargeError(f"{name} has more than {max_nodes:,} nodes (at least "
                                f"{least:,}, as the game declares): too large to walk for "
                                f"exact evaluation")
    key = str(game)
    if _EXCEEDED.get(key, -1) >= max_nodes:
        raise GameTooLargeError(f"{name} has more than {max_nodes:,} nodes: too large to walk "
                                f"for exact evaluation")
    walked = TreeWalk(game, max_nodes, name)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        walked._walk(game.new_initial_state(), 1.0, (0,) * walked.num_players)
    except RecursionError:
        raise GameTooLargeError(f"{name} is too deep to walk for exact evaluation") from None
    except GameTooLargeError:
        _EXCEEDED[key] = max(_EXCEEDED.get(key, -1), max_nodes)
        raise
    except (GameError, NotPerfectRecallError):
        raise
    except Exception as err:  # noqa: BLE001 - OpenSpiel's errors, and Python games' own
        raise GameError(f"game {name!r}: the game failed while its tree was walked: "
                        f"{failure(err)}") from None
    finally:
        sys.setrecursionlimit(limit)
    return walked


class TreeWalk:
    """What the walk has found so far (lists it appends to), then :meth:`players` and
    :meth:`leaves` as arrays."""

    def __init__(self, game: pyspiel.Game, max_nodes: int, name: str):
        self.game, self.name = game, name
        self.num_players = n = game.num_players()
        self.num_actions = game.num_distinct_actions()
        self.index: list[dict[str, int]] = [{} for _ in range(n)]
        """Per player, information-state string -> information set index."""
        self._keys: list[list[str]] = [[] for _ in range(n)]
        self._legal: list[list[np.ndarray]] = [[] for _ in range(n)]
        self._parent: list[list[int]] = [[] for _ in range(n)]
        self._seq_of: list[list[dict[int, int]]] = [[] for _ in range(n)]
        self._seq_parent: list[list[int]] = [[-1] for _ in range(n)]
        self._seq_infoset: list[list[int]] = [[-1] for _ in range(n)]
        self._seq_action: list[list[int]] = [[-1] for _ in range(n)]
        self._seq_depth: list[list[int]] = [[0] for _ in range(n)]
        self._leaf_chance: list[float] = []
        self._leaf_seqs: list[tuple[int, ...]] = []
        self._leaf_returns: list[list[float]] = []
        self.nodes = 0
        self._sequences = 0
        self._max_nodes = max_nodes

    def players(self) -> list[PlayerTree]:
        """Each player's information sets and sequences."""
        return [PlayerTree(
            keys=self._keys[p], legal=self._legal[p],
            parent_seq=np.array(self._parent[p], dtype=np.int64), seq_of=self._seq_of[p],
            seq_parent=np.array(self._seq_parent[p], dtype=np.int64),
            seq_infoset=np.array(self._seq_infoset[p], dtype=np.int64),
            seq_action=np.array(self._seq_action[p], dtype=np.int64),
            seq_depth=np.array(self._seq_depth[p], dtype=np.int64))
            for p in range(self.num_players)]

    def leaves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Chance probability (Z,), each player's sequence (N, Z) and returns (N, Z) of every
        terminal history."""
        n = self.num_players
        return (np.array(self._leaf_chance),
                np.array(self._leaf_seqs, dtype=np.int64).T.reshape(n, -1),
                np.array(self._leaf_returns).T.reshape(n, -1))

    def _infoset(self, state: pyspiel.State, player: int, parent_seq: int) -> int:
        key = state.information_state_string(player)
        index = self.index[player].get(key)
        if index is not None:
            if self._parent[player][index] != parent_seq:
                raise NotPerfectRecallError(
                    f"{self.name}: information set {key!r} of player {player} is reached by "
                    f"two different own-action histories (no perfect recall)")
            return index
        index = len(self._keys[player])
        self.index[player][key] = index
        self._keys[player].append(key)
        legal = np.array(state.legal_actions(player), dtype=np.int64)
        if legal.size == 0:
            raise GameError(f"game {self.name!r}: player {player} has no legal action at a "
                            f"state that is not terminal (after actions {state.history()}); "
                            f"such games cannot be played")
        if legal.min() < 0 or legal.max() >= self.num_actions:
            raise GameError(f"game {self.name!r}: a legal action of player {player} is not one "
                            f"of the game's {self.num_actions} distinct actions (legal: "
                            f"{legal.tolist()[:10]})")
        self._sequences += legal.size
        if self._sequences > self._max_nodes:
            raise GameTooLargeError(
                f"{self.name} has more than {self._max_nodes:,} sequences: too large to walk "
                f"for exact evaluation")
        self._legal[player].append(legal)
        self._parent[player].append(parent_seq)
        seqs = {}
        for a in legal:
            seqs[int(a)] = len(self._seq_parent[player])
            self._seq_parent[player].append(parent_seq)
            self._seq_infoset[player].append(index)
            self._seq_action[player].append(int(a))
            self._seq_depth[player].append(self._seq_depth[player][parent_seq] + 1)
        self._seq_of[player].append(seqs)
        return index

    def _walk(self, state: pyspiel.State, chance: float, seqs: tuple[int, ...]) -> None:
        self.nodes += 1
        if self.nodes > self._max_nodes:
            raise GameTooLargeError(
                f"{self.name} has more than {self._max_nodes:,} nodes: too large to walk for "
                f"exact evaluation")
        if state.is_terminal():
            self._leaf_chance.append(chance)
            self._leaf_seqs.append(seqs)
            self._leaf_returns.append(state.returns())
            return
        if state.is_chance_node():
            outcomes = [(action, prob) for action, prob in state.chance_outcomes() if prob > 0]
            if not outcomes:
                raise GameError(f"game {self.name!r}: a chance node has no outcome of positive "
                                f"probability (after actions {state.history()})")
            for action, prob in outcomes:
                self._walk(state.child(action), chance * prob, seqs)
            return
        if state.is_simultaneous_node():
            infosets = [self._infoset(state, p, seqs[p]) for p in range(self.num_players)]
            legal = [self._legal[p][i] for p, i in enumerate(infosets)]
            for joint in itertools.product(*legal):
                child = state.clone()
                child.apply_actions([int(a) for a in joint])
                new = tuple(self._seq_of[p][infosets[p]][int(a)] for p, a in enumerate(joint))
                self._walk(child, chance, new)
            return
        player = state.current_player()
        if not 0 <= player < self.num_players:
            raise GameError(f"game {self.name!r}: the player to move is {player}, not a player "
                            f"of this {self.num_players}-player game (after actions "
                            f"{state.history()})")
        infoset = self._infoset(state, player, seqs[player])
        for action in self._legal[player][infoset]:
            new = list(seqs)
            new[player] = self._seq_of[player][infoset][int(action)]
            self._walk(state.child(int(action)), chance, tuple(new))
