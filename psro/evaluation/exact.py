"""Exact evaluation on the sequence form: payoff blocks as array products, exploitability by
one best-response pass per player."""

from __future__ import annotations

import numpy as np

from psro.backends import Backend
from psro.evaluation.exploitability import exact_exploitability
from psro.extensive_form.policies import TabularPolicy
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.metrics_row import MEASURED_COLUMNS, per_player
from psro.payoffs import PayoffTable
from psro.state import RunState


class PlanStack:
    """Every member's realization plan, stacked per player and grown as members join (in a
    buffer that doubles, so adding a member costs the same however many there are); a
    population mixed by ``w`` has plan ``w @ stack``."""

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree
        self._buffers = [np.zeros((8, p.num_sequences)) for p in tree.players]
        self._counts = [0] * tree.num_players

    def plans(self, player: int, members: list) -> np.ndarray:
        """Shape (len(members), num_sequences): row k is member k's plan."""
        have, buffer = self._counts[player], self._buffers[player]
        if len(members) > len(buffer):
            grown = np.zeros((max(2 * len(buffer), len(members)), buffer.shape[1]))
            grown[:have] = buffer[:have]
            self._buffers[player] = buffer = grown
        for k in range(have, len(members)):
            buffer[k] = members[k].realization_plan(self.tree)
        self._counts[player] = max(have, len(members))
        return buffer[:len(members)]

    def mixed(self, populations: list[list], mixtures: list[np.ndarray]) -> list[np.ndarray]:
        """Each player's meta-policy as one realization plan: ``sum_k w_k r_k``."""
        return [w @ self.plans(p, pop)
                for p, (w, pop) in enumerate(zip(mixtures, populations, strict=True))]


    def correlated_reach(self, populations: list[list], player: int,
                         joint: np.ndarray) -> np.ndarray:
        """The other players' reach of every leaf (shape (num_leaves,), chance excluded) when
        their profile is drawn from ``joint`` summed over axis ``player``: ``sum over profiles
        k of joint(k) prod_q plan_{q, k_q}[leaf]``. Not normalised: a joint summing to c gives
        c times the reach of its normalised distribution."""
        opponents = np.asarray(joint, float).sum(axis=player)
        others = [q for q in range(len(populations)) if q != player]
        if not others:
            return np.ones(self.tree.leaf_chance.shape)
        support = []
        for axis in range(len(others)):
            rest = tuple(a for a in range(len(others)) if a != axis)
            support.append(np.flatnonzero(opponents.sum(axis=rest) > 0))
        opponents = opponents[np.ix_(*support)]
        operands: list = [opponents, list(range(len(others)))]
        for axis, (q, rows) in enumerate(zip(others, support, strict=True)):
            gathered = self.plans(q, populations[q])[rows][:, self.tree.leaf_seqs[q]]
            operands += [gathered, [axis, len(others)]]
        return np.einsum(*operands, [len(others)], optimize=True)


class ExactEvaluator:
    """Payoffs and exploitability computed exactly on the walked tree. Members must be
    tabular (have a realization plan)."""

    name = "exact"
    measures_exploitability = True
    """Exploitability is measured exactly every iteration (a target exploitability can end
    the run)."""
    exact_entries = True

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree
        self.stack = PlanStack(tree)

    def initial_members(self) -> list[TabularPolicy]:
        """One uniform-random tabular member per player."""
        return [TabularPolicy(p, self.tree.uniform_policy(p), name=f"uniform_p{p}",
                              metadata={"iteration": 0, "oracle": "uniform"})
                for p in range(self.tree.num_players)]

    def extend(self, table: PayoffTable, populations: list[list], backend: Backend) -> int:
        """Exact payoff blocks are array products of microseconds: they run in this process
        whatever the backend."""
        old, new = table.shape, tuple(len(pop) for pop in populations)
        plans = [self.stack.plans(p, pop) for p, pop in enumerate(populations)]
        blocks = PayoffTable.new_blocks(old, new)
        values = [self.tree.payoff_block([plans[q][s] for q, s in enumerate(block)])
                  for block in blocks]
        table.grow(new, blocks, values)
        return int(np.prod(new) - np.prod(old))

    @staticmethod
    def columns(num_players: int) -> tuple[str, ...]:
        """The keys of :meth:`measure`."""
        return MEASURED_COLUMNS + per_player("gain_p", num_players) + \
            per_player("value_p", num_players)

    def measure(self, populations: list[list], mixtures: list[np.ndarray],
                table: PayoffTable) -> dict:
        """Exact values, best-response gains and exploitability of the meta-policy."""
        result = exact_exploitability(self.tree, self.stack.mixed(populations, mixtures))
        return {"exploitability": result.exploitability, "nash_conv": result.nash_conv,
                "exploitability_kind": "exact",
                **{f"gain_p{p}": float(g) for p, g in enumerate(result.gains)},
                **{f"value_p{p}": float(v) for p, v in enumerate(result.values)}}

    def finish(self, state: RunState, backend: Backend) -> None:
        """Nothing: exact exploitability is measured every iteration."""
        return None  # measured exactly every iteration
