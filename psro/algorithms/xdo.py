"""XDO, extensive-form double oracle (McAleer et al. 2021), on the walked sequence form.

The restricted game is the full game tree in which, at each information set, a player may
take only the actions some best response of its population takes there with positive
probability (the lowest legal action where none does yet). Its equilibrium is a behavioural
policy that can mix at every information set, so it can be far less exploitable than any
mixture of the population. Each iteration:

1. the oracle trains one best response per player against the other player's restricted-game
   equilibrium (a table, which the PPO oracle plays as a tabular opponent);
2. the restricted game grows by the actions the new best responses take;
3. its equilibrium is solved exactly by the sequence-form LP (HiGHS), one LP per player:
   ``max v_0`` over the player's realization plan ``x`` (restricted sequences only) and the
   opponent's dual ``v``, subject to ``G_q v <= M_p^T x`` on the opponent's restricted
   sequences and ``G_p^T x = e_0``;
4. the equilibrium joins each population as a member (so run directories, resume, reports and
   ``load_run(dir).meta_policy()`` treat it as any member) and the meta-strategy puts all its
   weight on it; exploitability measures it exactly.

The run stops (stop reason ``restricted_game_complete``) when no new best response adds an
action: the restricted equilibrium is then an equilibrium of the full game.

Games with more than two players or not zero-sum: step 3 is CFR+ instead
(:mod:`psro.extensive_form.restricted_cfr`), run until the restricted game's NashConv is at or below
a tolerance that starts at ``CFR_START`` times the largest return and halves whenever the full
game's NashConv falls below it (the XDO authors' schedule), down to ``CFR_FLOOR``; the run stops
only once the tolerance is at its floor. CFR+ is a no-regret method: in n-player or general-sum
games its average profile carries no equilibrium guarantee, and neither does XDO (three-player Kuhn
poker converges, NashConv 5e-4 at iteration 13; on ``sheriff`` it cycles between NashConv 6 and 9).
Games small enough to walk.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from psro.algorithms.base import Algorithm, AlgorithmEntry
from psro.context import GameContext
from psro.errors import MetaSolverError
from psro.extensive_form.policies import TabularPolicy
from psro.extensive_form.restricted_cfr import behaviour, solve_restricted
from psro.extensive_form.sequence_form import SequenceFormGame, dual_matrix, payoff_matrix
from psro.oracles.spec import Target, plain_targets
from psro.state import RunState

EQUILIBRIUM = "xdo_restricted_nash"
"""The ``oracle`` metadata of restricted-game equilibrium members."""
NOT_RESPONSES = ("uniform", EQUILIBRIUM)


CFR_START = 0.5
"""First CFR+ tolerance on the restricted NashConv, times the largest absolute return."""
CFR_FLOOR = 1e-4
"""Smallest CFR+ tolerance, times the largest absolute return."""


def cfr_tolerance(metrics: list[dict], scale: float) -> float:
    """The CFR+ tolerance for the next restricted game: ``CFR_START * scale``, halved
    whenever the full game's NashConv of an iteration fell below it (as the XDO authors do),
    never below ``CFR_FLOOR * scale``. A function of the metrics, so a resumed run solves
    with the same tolerances."""
    tolerance = CFR_START * scale
    for row in metrics:
        while row.get("nash_conv") is not None and row["nash_conv"] < tolerance \
                and tolerance > CFR_FLOOR * scale:
            tolerance /= 2
    return max(tolerance, CFR_FLOOR * scale)


class XDOAlgorithm(Algorithm):
    """Extensive-form double oracle (see the module docstring)."""

    name = "xdo"

    def __init__(self, tree: SequenceFormGame, zero_sum: bool = True):
        self.tree = tree
        self.exact = tree.num_players == 2 and zero_sum
        """Restricted equilibrium by the LP (two-player zero-sum) or by CFR+."""
        if self.exact:
            self._dual = [dual_matrix(tree, q) for q in range(2)]
            self._payoff = [payoff_matrix(tree, p, 1 - p, p) for p in range(2)]

    def allowed(self, player: int, members: list) -> np.ndarray:
        """Boolean (num_infosets, num_actions): the restricted game's actions of ``player``
        from its best-response members (the lowest legal action where none acts)."""
        info = self.tree.players[player]
        allowed = np.zeros((info.num_infosets, self.tree.num_actions), dtype=bool)
        for member in members:
            if member.metadata.get("oracle") not in NOT_RESPONSES:
                allowed |= member.probs > 0
        for i in np.flatnonzero(~allowed.any(axis=1)):
            allowed[i, info.legal[i][0]] = True
        return allowed

    def expand(self, state: RunState) -> list[TabularPolicy]:
        """The restricted game's equilibrium, one new member per player."""
        n = self.tree.num_players
        allowed = [self.allowed(p, state.populations[p]) for p in range(n)]
        extra: dict = {}
        if self.exact:
            policies = [self._equilibrium(p, allowed) for p in range(n)]
        else:
            tolerance = cfr_tolerance(state.metrics, self.scale)
            solution = solve_restricted(self.tree, allowed, tolerance)
            policies = solution.policies
            extra = {"cfr_tolerance": tolerance, "cfr_iterations": solution.iterations,
                     "restricted_nash_conv": solution.nash_conv}
        return [TabularPolicy(p, policies[p], name=f"xdo_nash_p{p}_it{state.iteration}",
                              metadata={"iteration": state.iteration, "oracle": EQUILIBRIUM,
                                        **extra})
                for p in range(n)]

    @property
    def scale(self) -> float:
        """The largest absolute return of the game (CFR+ tolerances are relative to it)."""
        return max(float(np.abs(self.tree.leaf_returns).max()), 1e-12)

    def _sequences(self, player: int, allowed: np.ndarray) -> np.ndarray:
        info = self.tree.players[player]
        ok = np.ones(info.num_sequences, dtype=bool)
        ok[1:] = allowed[info.seq_infoset[1:], info.seq_action[1:]]
        return ok

    def _equilibrium(self, p: int, allowed: list[np.ndarray]) -> np.ndarray:
        q = 1 - p
        mine, theirs = self._sequences(p, allowed[p]), self._sequences(q, allowed[q])
        s_p, dual = len(mine), self._dual[q]
        rows = np.flatnonzero(theirs)
        a_ub = sp.hstack([-self._payoff[p].T.tocsr()[rows], dual[rows]]).tocsr()
        flow = self._dual[p].T.tocsr()
        a_eq = sp.hstack([flow, sp.csr_matrix((flow.shape[0], dual.shape[1]))]).tocsr()
        b_eq = np.zeros(flow.shape[0])
        b_eq[0] = 1.0
        cost = np.zeros(s_p + dual.shape[1])
        cost[s_p] = -1.0  # maximise v_0, p's guaranteed value in the restricted game
        bounds = [(0, None) if ok else (0, 0) for ok in mine] + [(None, None)] * dual.shape[1]
        result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(len(rows)), A_eq=a_eq, b_eq=b_eq,
                         bounds=bounds, method="highs")
        if result.status != 0:
            raise MetaSolverError(f"xdo: the restricted-game LP of player {p} failed "
                                  f"({result.message}); the previous iteration is kept")
        return behaviour(self.tree, p, np.maximum(result.x[:s_p], 0.0), allowed[p])

    def meta(self, state: RunState) -> list[np.ndarray]:
        """All the weight on each player's newest member, the restricted equilibrium."""
        out = []
        for pop in state.populations:
            weights = np.zeros(len(pop))
            weights[-1] = 1.0
            out.append(weights)
        return out

    def targets(self, state: RunState) -> list[Target]:
        """One best response per player against the restricted equilibrium."""
        return plain_targets(state.mixtures)

    def stop(self, state: RunState) -> str | None:
        """``restricted_game_complete`` once the newest best responses add no action (and,
        with CFR+, its tolerance has reached its floor: else the next iteration solves the
        same restricted game more tightly)."""
        if state.iteration < 1:
            return None
        if not self.exact and cfr_tolerance(state.metrics, self.scale) > CFR_FLOOR * self.scale:
            return None
        for p, pop in enumerate(state.populations):
            older = [m for m in pop if m.metadata.get("iteration", 0) < state.iteration]
            if not np.array_equal(self.allowed(p, older), self.allowed(p, pop)):
                return None
        return "restricted_game_complete"


def _xdo(context: GameContext, meta_solver) -> XDOAlgorithm:
    """The registry's factory: the walked tree is its restricted game."""
    return XDOAlgorithm(context.require_tree(NEEDS_TREE), zero_sum=context.game.zero_sum)


NEEDS_TREE = "algorithm 'xdo' (its restricted game is the walked tree)"
ENTRY = AlgorithmEntry(_xdo, meta_solver=None, default_meta_solver=None,
                       why="it puts all the meta-weight on its restricted game's equilibrium",
                       needs_tree=lambda config: NEEDS_TREE)
