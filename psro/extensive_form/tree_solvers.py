"""Whole-game equilibrium solvers of a walked game (``psro solve-tree GAME``), each run until its
average profile's exploitability crosses every threshold asked for, with the crossings timed:
the CFR family (:mod:`psro.extensive_form.tabular_cfr`: ``pcfr+``, ``dcfr``, ``lcfr``,
``cfr+``), the sequence-form LP (:mod:`psro.extensive_form.sequence_lp`; two-player
zero-sum games) by HiGHS's simplex (``lp``) or its interior-point method (``lp_ipm``), neither
faster on every game, and XDO's double oracle (:mod:`psro.extensive_form.tree_double_oracle`;
two-player zero-sum games), growing by improving actions, its restricted games solved exactly
by LPs (``xdo``) or by warm-started CFR+ (``xdo_cfr``) or PCFR+ (``xdo_pcfr``), or by CFR+
until the restricted game settles and DCFR+, its average carried across the last growths, after
(``xdo_dcfr+``).

Exploitability is measured exactly on the tree
(:func:`psro.evaluation.exploitability.exact_exploitability`, OpenSpiel's definition: NashConv
over the number of players), after iterations 1 to 10 and then every
tenth of the iterations run so far, so a crossing is found within 10% of its iteration; the
double oracles after each of their iterations (the CFR-family ones are given the next
threshold to cross as their target, so that a long restricted solve ends its iteration when a
check finds it crossed: :meth:`TreeDoubleOracle.step`). The seconds of a crossing are the
solver's own, the measurements left out (they cost about one iteration each, some 10% more
on the clock). Every solver builds its arrays of the whole game before its clock starts (the
CFR family's and the double oracles' compact arrays, the LP's constraint matrices:
:class:`TabularCFR`, :class:`TreeDoubleOracle` and :class:`SequenceFormLP` are built first);
everything that depends on the solve is timed (for the double oracles: the first restricted
game, each restricted game's LP or compact arrays, and the passes over the whole game).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from psro.backends.threads import one_blas_thread
from psro.evaluation.exploitability import exact_exploitability
from psro.extensive_form.restricted_solves import SETTLE_GROWTH
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_lp import LinearProgramTimeout, SequenceFormLP, lp_applies
from psro.extensive_form.tabular_cfr import VARIANTS, TabularCFR
from psro.extensive_form.tree_double_oracle import CFR_SHARE, TreeDoubleOracle

LP_SOLVERS = {"lp": "simplex", "lp_ipm": "ipm"}
"""The LP's solvers by name: the method of :data:`~psro.extensive_form.sequence_lp.LP_METHODS`
each runs (two-player zero-sum games only)."""
DOUBLE_ORACLES = {"xdo": {}, "xdo_cfr": {"variant": "cfr+"}, "xdo_pcfr": {"variant": "pcfr+"},
                  "xdo_dcfr+": {"variant": "cfr+", "settled_variant": "dcfr+"}}
"""The double oracles (PSRO family) :func:`solve_tree` runs, by name, and each one's
restricted-game solvers (:class:`~psro.extensive_form.tree_double_oracle.TreeDoubleOracle`'s
options): XDO's on restricted LPs, and on warm-started CFR+ or PCFR+ solves of compacted
restricted games, or CFR+ ones until the restricted game settles and DCFR+ ones, continuing
one average, after."""
TREE_SOLVERS = (*VARIANTS, *LP_SOLVERS, *DOUBLE_ORACLES)
"""The solvers :func:`solve_tree` runs, by name."""
ZERO_SUM_SOLVERS = (*LP_SOLVERS, *DOUBLE_ORACLES)
"""The solvers of two-player zero-sum games only."""


@dataclass
class TreeSolve:
    """A solver's run on a game: its ``curve`` (one row per measurement: ``iterations``,
    ``seconds``, ``exploitability``), the ``crossings`` of the thresholds (threshold ->
    ``{"iterations", "seconds"}``; those not crossed are missing), the final average
    ``policies`` (one (num_infosets, num_actions) array per player), and why it stopped
    (``"thresholds"``, ``"time_budget"``, ``"max_iterations"``, or for ``xdo``
    ``"restricted_game_complete"``: nothing to add, an equilibrium to the LP's tolerance).
    ``curve`` and ``policies`` are empty where the time budget ran out before the first
    measurement (an LP that HiGHS had not solved by then)."""

    solver: str
    curve: list[dict] = field(default_factory=list)
    crossings: dict[float, dict] = field(default_factory=dict)
    policies: list[np.ndarray] = field(default_factory=list)
    stop_reason: str = ""

    def note(self, iterations: int, seconds: float, exploitability: float,
             thresholds: tuple[float, ...]) -> None:
        """Record a measurement and the thresholds it crosses first."""
        self.curve.append({"iterations": iterations, "seconds": seconds,
                           "exploitability": exploitability})
        for threshold in thresholds:
            if exploitability <= threshold and threshold not in self.crossings:
                self.crossings[threshold] = {"iterations": iterations, "seconds": seconds}


@one_blas_thread()  # matrix-vector products: see psro.backends.threads
def solve_tree(tree: SequenceFormGame, solver: str, thresholds: tuple[float, ...] = (1e-3,),
               time_budget_s: float = 60.0, max_iterations: int | None = None,
               cfr_share: float = CFR_SHARE, settle_growth: float = SETTLE_GROWTH) -> TreeSolve:
    """Run ``solver`` (a name of :data:`TREE_SOLVERS`) on ``tree`` until every threshold is
    crossed, ``time_budget_s`` solver seconds pass or ``max_iterations`` iterations ran (for
    ``xdo``, also when its restricted game is complete). An LP, the whole game's or ``xdo``'s
    restricted one, gets the seconds left as HiGHS's time limit, so that no solver runs much
    past the budget. ``cfr_share``: the CFR-family double oracles
    :attr:`~psro.extensive_form.tree_double_oracle.TreeDoubleOracle.cfr_share`;
    ``settle_growth``: ``xdo_dcfr+``'s restricted game has settled once an iteration grows it
    by less than this share of the game's actions
    (:class:`~psro.extensive_form.restricted_solves.RestrictedSolves`). ``ValueError`` for an
    unknown solver, an LP or ``xdo`` on a game that is not two-player zero-sum, or (for a
    double oracle that takes it) a ``cfr_share`` outside (0, 1] or a ``settle_growth`` outside
    [0, 1]."""
    if solver not in TREE_SOLVERS:
        raise ValueError(f"unknown tree solver {solver!r}; accepted: {', '.join(TREE_SOLVERS)}")
    thresholds = tuple(sorted(thresholds, reverse=True))
    result = TreeSolve(solver)
    if solver in ZERO_SUM_SOLVERS and not lp_applies(tree):
        raise ValueError(f"solver {solver!r} needs a two-player zero-sum game; {tree.name!r} "
                         f"is not one (the CFR family solves any game)")
    if solver in DOUBLE_ORACLES:
        options = DOUBLE_ORACLES[solver]
        settling = {"settle_growth": settle_growth} if "settled_variant" in options else {}
        return _double_oracle(tree, result, thresholds, time_budget_s, max_iterations,
                              TreeDoubleOracle(tree, **options, cfr_share=cfr_share,
                                               **settling))
    if solver in LP_SOLVERS:
        lp = SequenceFormLP(tree)
        start = time.perf_counter()
        try:
            result.policies, _ = lp.solve(method=LP_SOLVERS[solver], time_limit=time_budget_s)
        except LinearProgramTimeout:  # HiGHS stopped at the budget: no measurement
            result.stop_reason = "time_budget"
            return result
        seconds = time.perf_counter() - start
        result.note(1, seconds, _exploitability(tree, result.policies), thresholds)
        result.stop_reason = "thresholds" if len(result.crossings) == len(thresholds) \
            else "max_iterations"
        return result
    cfr, seconds, next_check = TabularCFR(tree, solver), 0.0, 1
    while True:
        start = time.perf_counter()
        cfr.iterate(next_check - cfr.t)
        seconds += time.perf_counter() - start
        result.policies = cfr.average()
        result.note(cfr.t, seconds, _exploitability(tree, result.policies), thresholds)
        result.stop_reason = _stop_reason(result, thresholds, seconds >= time_budget_s,
                                          max_iterations is not None and cfr.t >= max_iterations)
        if result.stop_reason:
            return result
        next_check = cfr.t + max(1, cfr.t // 10)
        if max_iterations is not None:
            next_check = min(next_check, max_iterations)


def _double_oracle(tree: SequenceFormGame, result: TreeSolve, thresholds: tuple[float, ...],
                   time_budget_s: float, max_iterations: int | None,
                   oracle: TreeDoubleOracle) -> TreeSolve:
    """:func:`solve_tree`'s loop for a double oracle: one measurement after each
    iteration."""
    seconds = 0.0
    while True:
        start = time.perf_counter()
        try:
            oracle.step(start + max(time_budget_s - seconds, 0.0),
                        next(t for t in thresholds if t not in result.crossings))
        except LinearProgramTimeout:  # a restricted LP outlasted the budget: the last
            result.stop_reason = "time_budget"  # measurement stands
            return result
        seconds += time.perf_counter() - start
        result.policies = oracle.policies()
        result.note(oracle.iterations, seconds, _exploitability(tree, result.policies),
                    thresholds)
        result.stop_reason = _stop_reason(
            result, thresholds, seconds >= time_budget_s,
            max_iterations is not None and oracle.iterations >= max_iterations, oracle.finished)
        if result.stop_reason:
            return result


def _stop_reason(result: TreeSolve, thresholds: tuple[float, ...], out_of_time: bool,
                 out_of_iterations: bool, complete: bool = False) -> str:
    """Why a solver stops after its last measurement ("" where it goes on): every threshold
    crossed first, then a complete restricted game, the time budget, the iteration budget."""
    if len(result.crossings) == len(thresholds):
        return "thresholds"
    if complete:
        return "restricted_game_complete"
    if out_of_time:
        return "time_budget"
    return "max_iterations" if out_of_iterations else ""


def _exploitability(tree: SequenceFormGame, policies: list[np.ndarray]) -> float:
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    return exact_exploitability(tree, plans).exploitability


__all__ = ["DOUBLE_ORACLES", "LP_SOLVERS", "TREE_SOLVERS", "ZERO_SUM_SOLVERS", "TreeSolve",
           "lp_applies", "solve_tree"]
