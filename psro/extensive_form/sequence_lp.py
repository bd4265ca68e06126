"""The sequence-form LP of a two-player zero-sum walked game (von Stengel 1996), solved by
HiGHS: both players' equilibrium realization plans from one LP, on the whole game or on a
restricted game (XDO's, :mod:`psro.algorithms.xdo`).

``max v_0`` over player 0's realization plan ``x`` (allowed sequences only) and player 1's dual
``v``, subject to ``G_1 v <= M_0^T x`` on player 1's allowed sequences and ``G_0^T x = e_0``;
the multipliers of those inequality constraints are player 1's equilibrium realization plan
(LP duality), so one LP gives both players. Exact up to HiGHS's tolerances (its primal and dual
feasibility tolerance, 1e-7 by default: exploitability about 1e-9 to 1e-15 on the walkable
games of the suite).

Two of HiGHS's methods (:data:`LP_METHODS`): its own choice, the dual simplex on these LPs
(``"simplex"``, the default), and the interior-point method followed by a crossover to a basic
solution (``"ipm"``). Neither is faster on every game: on the whole of liar's dice the simplex
takes 1.5 s and the interior point 4.4 s; on goofspiel 6, 13.7 s and 5.4 s; on Leduc with 13
ranks, 408 s and 35 s (``psro solve-tree GAME --solver lp --solver lp_ipm``; docs: tabular
solvers).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from psro.extensive_form.cfr_passes import behaviour
from psro.extensive_form.sequence_form import SequenceFormGame, dual_matrix

LP_METHODS = {"simplex": "highs", "ipm": "highs-ipm"}
"""The LP's methods by name: scipy's ``linprog`` method that runs each."""


class LinearProgramError(RuntimeError):
    """HiGHS did not solve the LP (its message says why)."""


class SequenceFormLP:
    """The LP's constraint matrices of ``tree`` (two players, zero-sum), built once; each
    :meth:`solve` keeps the rows of the sequences it allows."""

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree
        self._dual = [dual_matrix(tree, q) for q in range(2)]
        payoff = tree.payoff_matrices()[0]
        self._inequalities = sp.hstack([-payoff.T.tocsr(), self._dual[1]]).tocsr()
        flow = self._dual[0].T.tocsr()
        self._flow = sp.hstack([flow, sp.csr_matrix((flow.shape[0],
                                                     self._dual[1].shape[1]))]).tocsr()

    def _sequences(self, player: int, allowed: np.ndarray) -> np.ndarray:
        info = self.tree.players[player]
        ok = np.ones(info.num_sequences, dtype=bool)
        ok[1:] = allowed[info.seq_infoset[1:], info.seq_action[1:]]
        return ok

    def solve(self, allowed: list[np.ndarray] | None = None,
              method: str = "simplex") -> tuple[list[np.ndarray], float]:
        """Both players' equilibrium policies (num_infosets, num_actions) of the game whose
        players take only the ``allowed`` actions (boolean, one array per player; None: every
        legal action), and player 0's value, by HiGHS's ``method`` (a name of
        :data:`LP_METHODS`). :class:`LinearProgramError` where HiGHS fails; ``ValueError``
        for an unknown method."""
        if method not in LP_METHODS:
            raise ValueError(f"unknown LP method {method!r}; accepted: {', '.join(LP_METHODS)}")
        tree = self.tree
        if allowed is None:
            allowed = [tree.uniform_policy(p) > 0 for p in range(2)]
        mine, theirs = self._sequences(0, allowed[0]), self._sequences(1, allowed[1])
        s_0, duals = len(mine), self._dual[1].shape[1]
        rows = np.flatnonzero(theirs)
        b_eq = np.zeros(self._flow.shape[0])
        b_eq[0] = 1.0
        cost = np.zeros(s_0 + duals)
        cost[s_0] = -1.0  # maximise v_0, player 0's guaranteed value
        bounds = np.zeros((s_0 + duals, 2))
        bounds[:s_0, 1] = np.where(mine, np.inf, 0.0)
        bounds[s_0:] = (-np.inf, np.inf)
        result = linprog(cost, A_ub=self._inequalities[rows], b_ub=np.zeros(len(rows)),
                         A_eq=self._flow, b_eq=b_eq, bounds=bounds, method=LP_METHODS[method])
        if result.status != 0:
            raise LinearProgramError(result.message)
        plan_1 = np.zeros(len(theirs))
        plan_1[rows] = np.maximum(-result.ineqlin.marginals, 0.0)
        return [behaviour(tree, 0, np.maximum(result.x[:s_0], 0.0), allowed[0]),
                behaviour(tree, 1, plan_1, allowed[1])], float(-result.fun)


__all__ = ["LP_METHODS", "LinearProgramError", "SequenceFormLP"]
