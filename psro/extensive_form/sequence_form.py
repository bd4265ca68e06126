"""Sequence-form view of a game small enough to walk: exact payoffs and best responses.

The tree is walked once. Each player's information sets (keyed by OpenSpiel information-state
strings) and sequences (the player's own action histories; sequence 0 is the empty one) are
numbered, and every terminal history z is stored as its chance probability ``c_z``, each
player's sequence ``s_q(z)`` and the returns. A behavioural policy of player q becomes a
*realization plan* ``r_q`` (one number per sequence: the product of q's own action
probabilities along it), and then

    u_p(pi) = sum_z c_z * prod_q r_q[s_q(z)] * returns_p(z),

one vectorised gather-multiply-sum. Realization plans are linear in mixtures, so a population
mixed by ``w`` has plan ``sum_k w_k r^k`` (OpenSpiel's ``PolicyAggregator``'s policy). A best
response is a backward pass, deepest information sets first; exact up to rounding.
"""

from __future__ import annotations

import hashlib
import itertools

import numpy as np
import pyspiel
import scipy.sparse as sp

from games.loading import GameError
from games.probe import failure
from psro.extensive_form.tree_walk import walk_tree

SPARSE_PAYOFF_LEAVES = 500
"""From this many leaves a two-player payoff block is computed through the sparse payoff
matrices: with 20 members a side, 1.3x faster at 567 leaves (liar's dice with 3 sides), 20x on
Leduc (5,520), 77x on goofspiel 6 (518,400); below it the gathered product is faster (Kuhn,
30 leaves: 0.026 ms against 0.049 ms)."""

RECENT_RESPONSES = 2
"""Best responses :meth:`SequenceFormGame.best_response` keeps (with their opponents' plans)."""


class SequenceFormGame:
    """The walked tree of an OpenSpiel game. Raises :class:`GameTooLargeError` past
    ``max_nodes`` nodes (the walk stops there, so refusing a huge game costs little)."""

    def __init__(self, game: pyspiel.Game, max_nodes: int = 2_000_000, name: str | None = None):
        self.name = name or str(game)
        """The game as messages name it (the user's game string where given)."""
        walked = walk_tree(game, max_nodes, self.name)
        self.game = game
        self.num_players = game.num_players()
        self.num_actions = game.num_distinct_actions()
        self.players = walked.players()
        self.leaf_chance, self.leaf_seqs, self.leaf_returns = walked.leaves()
        self.num_nodes = walked.nodes
        self._index = walked.index
        self._depth_levels = [self._levels(p) for p in range(self.num_players)]
        self._representatives: dict[int, list[pyspiel.State]] = {}
        self._response_orders: dict[int, tuple[np.ndarray, list[np.ndarray]]] = {}
        self._payoff_matrices: list[sp.csr_matrix] | None = None
        self._recent_responses: list[tuple[tuple, np.ndarray, float]] = []

    def _levels(self, player: int) -> list[np.ndarray]:
        depth = self.players[player].seq_depth
        return [np.flatnonzero(depth == d) for d in range(1, int(depth.max()) + 1)] \
            if depth.size > 1 else []

    # -- information sets -------------------------------------------------------------------
    def keys_digest(self) -> list[str]:
        """Per player, a short hash of the information-state keys in index order: tables saved
        for this tree only fit a tree with the same digest."""
        return [hashlib.sha256("\n".join(p.keys).encode()).hexdigest()[:16]
                for p in self.players]

    def representative_states(self, player: int) -> list[pyspiel.State]:
        """One pyspiel state per information set of ``player``, in infoset order (found by one
        walk, kept for later calls)."""
        if player not in self._representatives:
            try:
                self._representatives[player] = self._find_representatives(player)
            except Exception as err:  # noqa: BLE001 - OpenSpiel's, or a Python game's own
                raise GameError(f"game {self.name!r}: the game failed while its tree was "
                                f"walked: {failure(err)}") from None
        return self._representatives[player]

    def _find_representatives(self, player: int) -> list[pyspiel.State]:
        found: dict[int, pyspiel.State] = {}
        target = self.players[player].num_infosets
        stack = [self.game.new_initial_state()]
        while stack and len(found) < target:
            state = stack.pop()
            if state.is_terminal():
                continue
            if state.is_chance_node():
                stack += [state.child(a) for a, prob in reversed(state.chance_outcomes())
                          if prob > 0]
                continue
            if state.is_simultaneous_node() or state.current_player() == player:
                index = self.infoset_index(player, state.information_state_string(player))
                if index is not None and index not in found:
                    found[index] = state
            if state.is_simultaneous_node():
                legal = [state.legal_actions(p) for p in range(self.num_players)]
                children = []
                for joint in itertools.product(*legal):
                    child = state.clone()
                    child.apply_actions(list(joint))
                    children.append(child)
                stack += reversed(children)
            else:
                stack += [state.child(a) for a in reversed(state.legal_actions())]
        return [found[i] for i in range(target)]

    # -- policies and plans -----------------------------------------------------------------
    def infoset_index(self, player: int, key: str) -> int | None:
        """Index of the information set with this key, or None when it does not occur."""
        return self._index[player].get(key)

    def uniform_policy(self, player: int) -> np.ndarray:
        """Uniform random behaviour of ``player``: shape (num_infosets, num_actions)."""
        legal = self._response_order(player)[0] >= 0
        return legal / legal.sum(axis=1, keepdims=True)

    def realization_plan(self, player: int, probs: np.ndarray) -> np.ndarray:
        """Realization plan (num_sequences,) of a behavioural policy given as action
        probabilities of shape (num_infosets, num_actions)."""
        tree = self.players[player]
        plan = np.ones(tree.num_sequences)
        for level in self._depth_levels[player]:
            plan[level] = plan[tree.seq_parent[level]] * probs[tree.seq_infoset[level],
                                                                tree.seq_action[level]]
        return plan

    def expected_returns(self, plans: list[np.ndarray]) -> np.ndarray:
        """Expected returns (num_players,) of independent players with these plans."""
        weight = self.leaf_chance.copy()
        for q, plan in enumerate(plans):
            weight *= plan[self.leaf_seqs[q]]
        return self.leaf_returns @ weight

    def payoff_block(self, plans: list[np.ndarray]) -> np.ndarray:
        """Payoffs of every profile drawn from stacks of plans.

        ``plans[q]`` has shape (K_q, num_sequences_q). Returns an array of shape
        (num_players, K_0, ..., K_{N-1}), to rounding (relative 1e-13).

        Two-player games with at least :data:`SPARSE_PAYOFF_LEAVES` leaves use the
        sequence-form payoff matrices (:meth:`payoff_matrices`): ``X M_p Y^T``, one sparse and
        one dense product per player. Smaller ones, and games of more players, multiply the
        plans gathered at every leaf.
        """
        n = self.num_players
        if n == 2 and self.leaf_chance.size >= SPARSE_PAYOFF_LEAVES:
            return self._two_player_block(plans[0], plans[1])
        gathered = [plans[q][:, self.leaf_seqs[q]] for q in range(n)]  # (K_q, Z)
        if n == 2:
            left = gathered[0] * self.leaf_chance
            return np.stack([(left * self.leaf_returns[p]) @ gathered[1].T for p in range(n)])
        shape = tuple(g.shape[0] for g in gathered)
        out = np.empty((n,) + shape)
        for index in itertools.product(*(range(k) for k in shape)):
            weight = self.leaf_chance.copy()
            for q, i in enumerate(index):
                weight *= gathered[q][i]
            out[(slice(None),) + index] = self.leaf_returns @ weight
        return out

    def payoff_matrices(self) -> list[sp.csr_matrix]:
        """Two-player games: ``[M_0, M_1]``, each player's :func:`payoff_matrix` with player 0's
        sequences as rows and player 1's as columns; built on the first call and kept."""
        if self._payoff_matrices is None:
            self._payoff_matrices = [payoff_matrix(self, 0, 1, p) for p in range(2)]
        return self._payoff_matrices

    def _two_player_block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        out = np.empty((2, rows.shape[0], cols.shape[0]))
        for p, matrix in enumerate(self.payoff_matrices()):
            if rows.shape[0] <= cols.shape[0]:  # the sparse product with the smaller stack
                out[p] = (matrix.T @ rows.T).T @ cols.T
            else:
                out[p] = rows @ (matrix @ cols.T)
        return out

    def _response_order(self, player: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """For best responses: the sequence of each (infoset, action) (-1 where illegal), and
        the infosets grouped by the depth of the sequence leading to them, deepest group first,
        each in descending index order. All infosets below a sequence share its group, so
        adding a group's values with ``np.add.at`` sums exactly as one infoset at a time in
        reverse discovery order does."""
        if player not in self._response_orders:
            tree = self.players[player]
            table = np.full((tree.num_infosets, self.num_actions), -1, dtype=np.int64)
            for i, seqs in enumerate(tree.seq_of):
                for action, seq in seqs.items():
                    table[i, action] = seq
            depth = tree.seq_depth[tree.parent_seq]
            levels = [np.flatnonzero(depth == d)[::-1] for d in np.unique(depth)[::-1]]
            self._response_orders[player] = (table, levels)
        return self._response_orders[player]

    def best_response(self, player: int, plans: list[np.ndarray]) -> tuple[np.ndarray, float]:
        """A deterministic best response of ``player`` to the other players' plans
        (``plans[player]`` is ignored): action probabilities (num_infosets, num_actions),
        one-hot at each information set, ties to the lowest action id; and its value.

        The last ``RECENT_RESPONSES`` answers are kept, keyed by the opponents' plans bit for
        bit: a run's exploitability and its next best responses ask for the same one (an exact
        oracle in this process against the meta-policy just measured)."""
        key = (player, b"".join(np.ascontiguousarray(plan, dtype=np.float64).tobytes()
                                for q, plan in enumerate(plans) if q != player))
        for seen, probs, value in self._recent_responses:
            if seen == key:
                return probs.copy(), value
        weight = self.leaf_chance * self.leaf_returns[player]
        for q, plan in enumerate(plans):
            if q != player:
                weight = weight * plan[self.leaf_seqs[q]]
        probs, value = self._respond(player, weight)
        self._recent_responses = [*self._recent_responses[1 - RECENT_RESPONSES:],
                                  (key, probs.copy(), value)]
        return probs, value

    def best_response_to_reach(self, player: int, reach: np.ndarray) -> tuple[np.ndarray, float]:
        """:meth:`best_response` to the other players' reach of each leaf (chance excluded),
        e.g. a sum over a correlated distribution's profiles of their plans' products (not
        normalised: the value scales with it)."""
        return self._respond(player, self.leaf_chance * self.leaf_returns[player] * reach)

    def _respond(self, player: int, weight: np.ndarray) -> tuple[np.ndarray, float]:
        tree = self.players[player]
        value = np.bincount(self.leaf_seqs[player], weights=weight,
                            minlength=tree.num_sequences)
        probs = np.zeros((tree.num_infosets, self.num_actions))
        seq_table, levels = self._response_order(player)
        for infosets in levels:
            seqs = seq_table[infosets]
            values = np.where(seqs >= 0, value[seqs], -np.inf)
            best = np.argmax(values, axis=1)  # the lowest action id among ties
            probs[infosets, best] = 1.0
            np.add.at(value, tree.parent_seq[infosets], values[np.arange(len(best)), best])
        return probs, float(value[0])


def dual_matrix(tree: SequenceFormGame, q: int) -> sp.csr_matrix:
    """``G`` (num_sequences x (1 + num_infosets)) of player q: ``G v >= b`` are the dual
    constraints of q's best response to sequence values ``b`` (``v[0]`` the root, ``v[i + 1]``
    information set i); its transpose is q's sequence-form flow constraints ``G^T y = e_0``."""
    player = tree.players[q]
    rows = [0] + list(range(1, player.num_sequences)) + list(player.parent_seq)
    cols = [0] + [int(i) + 1 for i in player.seq_infoset[1:]] + \
        list(range(1, player.num_infosets + 1))
    data = [1.0] * player.num_sequences + [-1.0] * player.num_infosets
    return sp.csr_matrix((data, (rows, cols)),
                         shape=(player.num_sequences, player.num_infosets + 1))


def payoff_matrix(tree: SequenceFormGame, rows: int, cols: int, utility: int) -> sp.csr_matrix:
    """``M[s_rows, s_cols]``: chance-weighted returns of player ``utility`` summed over the
    leaves reached by those two sequences (two-player games)."""
    return sp.csr_matrix((tree.leaf_chance * tree.leaf_returns[utility],
                          (tree.leaf_seqs[rows], tree.leaf_seqs[cols])),
                         shape=(tree.players[rows].num_sequences,
                                tree.players[cols].num_sequences))
