"""The sequence-form LP of a two-player zero-sum walked game (von Stengel 1996), solved by
HiGHS: both players' equilibrium realization plans from one LP, on the whole game or on a
restricted game (XDO's, :mod:`psro.algorithms.xdo`).

``max v_0`` over player 0's realization plan ``x`` (allowed sequences only) and player 1's dual
``v``, subject to ``G_1 v <= M_0^T x`` on player 1's allowed sequences and ``G_0^T x = e_0``;
the multipliers of those inequality constraints are player 1's equilibrium realization plan
(LP duality), so one LP gives both players. Exact up to HiGHS's tolerances (its primal and dual
feasibility tolerance, 1e-7 by default: exploitability about 1e-9 to 1e-15 on the walkable
games of the suite).

A restricted game's LP keeps only the part of the game its players can reach
(:func:`~psro.extensive_form.reached.live`):
the sequences of allowed actions that lead to a leaf both restricted players reach, player 1's
information sets (its dual variables) and player 0's (its flow constraints) that such a leaf
passes. The rest of the LP is bounded to zero or carries no payoff, so the equilibria and the
value are those of the whole restricted LP; what is left out is most of it (``xdo``'s
restricted games on liar's dice reach 0.02-5% of the leaves), and HiGHS solves ``xdo``'s
restricted LPs 2-4 times faster in all on goofspiel 5 and 6 and liar's dice, up to 33 times
for one LP, and as fast on Leduc and Kuhn (``python experiments/bench_xdo_floor.py --parts
pruned``). Where the LP leaves a player's policy free (an information set that the restricted
opponent never lets it reach, or that its own plan does not), the returned policy is uniform
over the allowed actions.

Two of HiGHS's methods (:data:`LP_METHODS`): its own choice, the dual simplex on these LPs
(``"simplex"``, the default), and the interior-point method followed by a crossover to a basic
solution (``"ipm"``). Neither is faster on every game: on the whole of liar's dice the simplex
takes 1.5 s and the interior point 4.4 s; on goofspiel 6, 13.7 s and 5.4 s; on Leduc with 13
ranks, 408 s and 35 s (``psro solve-tree GAME --solver lp --solver lp_ipm --time-budget
600``; docs: tabular solvers). Given a ``time_limit``, HiGHS stops there
(:class:`LinearProgramTimeout`): ``psro solve-tree`` gives it the seconds left of its budget.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from psro.extensive_form.reached import LiveGame, live
from psro.extensive_form.sequence_form import SequenceFormGame, dual_matrix
from psro.extensive_form.sequence_passes import behaviour

LP_METHODS = {"simplex": "highs", "ipm": "highs-ipm"}
"""The LP's methods by name: scipy's ``linprog`` method that runs each."""


def lp_applies(tree: SequenceFormGame) -> bool:
    """Whether the sequence-form LP solves ``tree``: two players whose returns sum to zero at
    every leaf (to 1e-9)."""
    return tree.num_players == 2 and float(np.abs(tree.leaf_returns.sum(axis=0)).max()) < 1e-9


class LinearProgramError(RuntimeError):
    """HiGHS did not solve the LP (its message says why)."""


class LinearProgramTimeout(LinearProgramError):
    """HiGHS reached the time limit it was given before it solved the LP."""


class SequenceFormLP:
    """The LP's constraint matrices of ``tree`` (two players, zero-sum), built once; each
    :meth:`solve` keeps the part of them its restricted game reaches (:func:`live`)."""

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree
        self._dual = [dual_matrix(tree, q) for q in range(2)]
        payoff = tree.payoff_matrices()[0]
        self._inequalities = sp.hstack([-payoff.T.tocsr(), self._dual[1]]).tocsr()
        flow = self._dual[0].T.tocsr()
        self._flow = sp.hstack([flow, sp.csr_matrix((flow.shape[0],
                                                     self._dual[1].shape[1]))]).tocsr()

    def solve(self, allowed: list[np.ndarray] | None = None, method: str = "simplex",
              time_limit: float | None = None) -> tuple[list[np.ndarray], float]:
        """Both players' equilibrium policies (num_infosets, num_actions) of the game whose
        players take only the ``allowed`` actions (boolean, one array per player; None: every
        legal action), and player 0's value, by HiGHS's ``method`` (a name of
        :data:`LP_METHODS`) in at most ``time_limit`` seconds (None: no limit).
        :class:`LinearProgramTimeout` where the time runs out first,
        :class:`LinearProgramError` where HiGHS fails otherwise; ``ValueError`` for an
        unknown method."""
        if allowed is None:
            allowed = [self.tree.uniform_policy(p) > 0 for p in range(2)]
        plans, value = self.solve_plans(allowed, method, time_limit=time_limit)
        return [behaviour(self.tree, p, plan, allowed[p]) for p, plan in enumerate(plans)], value

    def solve_plans(self, allowed: list[np.ndarray], method: str = "simplex",
                    reached: LiveGame | None = None,
                    time_limit: float | None = None) -> tuple[list[np.ndarray], float]:
        """:meth:`solve`'s equilibrium as the LP gives it: each player's realization plan
        (num_sequences,), 0 off the part of the game both restricted players reach (where the
        LP leaves a player free), and player 0's value. ``reached``: that part
        (:func:`~psro.extensive_form.reached.live` of ``allowed``), where the caller has
        it; ``time_limit``: as :meth:`solve`'s."""
        if method not in LP_METHODS:
            raise ValueError(f"unknown LP method {method!r}; accepted: {', '.join(LP_METHODS)}")
        if reached is None:
            reached = live(self.tree, allowed)
        mine, theirs = reached.sequences
        s_0 = len(mine)
        columns = np.concatenate([np.flatnonzero(mine),
                                  s_0 + np.flatnonzero(np.r_[True, reached.infosets[1]])])
        rows = np.flatnonzero(theirs)
        flows = np.flatnonzero(np.r_[True, reached.infosets[0]])
        n_0 = int(mine.sum())
        cost = np.zeros(len(columns))
        cost[n_0] = -1.0  # maximise v_0, player 0's guaranteed value
        bounds = np.zeros((len(columns), 2))
        bounds[:n_0, 1] = np.inf
        bounds[n_0:] = (-np.inf, np.inf)
        b_eq = np.zeros(len(flows))
        b_eq[0] = 1.0
        result = linprog(cost, A_ub=self._inequalities[rows][:, columns],
                         b_ub=np.zeros(len(rows)), A_eq=self._flow[flows][:, columns], b_eq=b_eq,
                         bounds=bounds, method=LP_METHODS[method],
                         options={} if time_limit is None else {"time_limit": time_limit})
        if result.status == 1 and time_limit is not None:
            raise LinearProgramTimeout(f"no solution within the time limit of "
                                       f"{time_limit:.3g} s ({result.message})")
        if result.status != 0:
            raise LinearProgramError(result.message)
        plan_0, plan_1 = np.zeros(s_0), np.zeros(len(theirs))
        plan_0[mine] = np.maximum(result.x[:n_0], 0.0)
        plan_1[rows] = np.maximum(-result.ineqlin.marginals, 0.0)
        return [plan_0, plan_1], float(-result.fun)


__all__ = ["LP_METHODS", "LinearProgramError", "LinearProgramTimeout", "SequenceFormLP",
           "lp_applies"]
