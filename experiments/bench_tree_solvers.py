"""Benchmark: the tabular solvers of a walked game side by side in one process: the toolkit's
vectorised PCFR+, DCFR, DCFR+, linear CFR and CFR+, the sequence-form LP and XDO's double oracle
on restricted LPs (``psro solve-tree``), OpenSpiel's C++ CFR+ (the walkable suite's reference
line), and the toolkit's fastest PSRO-family method (``xdo``, with each of its restricted-game
solvers: the LP, CFR+, PCFR+ and DCFR, and the LP with either ``xdo_expansion``): time and
iterations to each exploitability threshold.

Run: ``python experiments/bench_tree_solvers.py [--games leduc_poker liars_dice ...]
[--thresholds 1e-3,1e-4,1e-6] [--budget 60] [--skip-openspiel] [--xdo-only] [--solvers ...]
[--xdo ...]`` (``--xdo-only``: the ``xdo`` rows alone, as its default solver was chosen;
``--solvers`` and ``--xdo``: only the named tree solvers and ``xdo`` rows, e.g. ``--solvers lp
lp_ipm dcfr --xdo lp-responses lp-improving --skip-openspiel`` for the rows the restricted LP
decides; ``--xdo`` alone: no ``xdo`` row; ``--cfr-shares 0.3 0.4``: rows of the CFR-family
double oracles (``xdo_cfr``, ``xdo_pcfr``, ``xdo_dcfr+``) at each of these ``cfr_share`` values,
where each restricted solve stops, instead of the default's; ``--settle-growths 0.03 1``:
rows of ``xdo_dcfr+`` at each of these ``settle_growth`` values, below which an iteration's
growth settles its restricted game; ``--repeats N``: every row measured
N times (the tree solvers' in turn, OpenSpiel's CFR+ and each ``xdo`` row one run after
another), each cell the median, its iterations the same every time). Each method gets
``--budget`` seconds per game; ``-`` marks a threshold it did not reach. Times are each method's
own: the solvers' without their exploitability checks, CFR+'s without its measurements
(:func:`psro.bench.references.cfr_plus_curve`), and ``xdo``'s run clock (best responses,
restricted solves and its own exact exploitability every iteration included). The walk of the
tree (shared by the toolkit's solvers and ``xdo``) is printed apart, and so is the loading of
the compiled CFR kernels (:func:`psro.extensive_form.compiled_cfr.load_kernels`), done once
before any method is timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402
from psro.bench.references import cfr_plus_curve  # noqa: E402
from psro.config import XDO_EXPANSIONS, XDO_SOLVERS  # noqa: E402
from psro.extensive_form.compiled_cfr import load_kernels  # noqa: E402
from psro.extensive_form.restricted_solves import SETTLE_GROWTH  # noqa: E402
from psro.extensive_form.sequence_form import SequenceFormGame  # noqa: E402
from psro.extensive_form.tree_double_oracle import CFR_SHARE  # noqa: E402
from psro.extensive_form.tree_solvers import (  # noqa: E402
    DOUBLE_ORACLES,
    TREE_SOLVERS,
    solve_tree,
)

GAMES = ("leduc_poker", "liars_dice",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)")


def crossings_of(rows: list[dict], thresholds: tuple[float, ...], seconds: str,
                 iterations: str) -> dict[float, tuple[float, int]]:
    """First row at or below each threshold: (seconds, iterations)."""
    found = {}
    for threshold in thresholds:
        row = next((r for r in rows if r["exploitability"] <= threshold), None)
        if row is not None:
            found[threshold] = (row[seconds], row[iterations])
    return found


XDO_METHODS = tuple((solver, expansion) for solver in XDO_SOLVERS for expansion in
                    (XDO_EXPANSIONS if solver == "lp" else ("responses",)))
"""``xdo``'s (restricted-game solver, expansion) pairs: ``"improving"`` grows with the LP only."""


def xdo(game: str, solver: str, expansion: str, thresholds: tuple[float, ...],
        budget: float) -> dict:
    run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver=solver, xdo_expansion=expansion,
                    seed=0)
    rows = run.run(time_budget_s=budget, target_exploitability=min(thresholds))
    return crossings_of(rows, thresholds, "wall_time_s", "iteration")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES), metavar="GAME")
    parser.add_argument("--thresholds", default="1e-3,1e-4,1e-6")
    parser.add_argument("--budget", type=float, default=60.0)
    parser.add_argument("--skip-openspiel", action="store_true")
    parser.add_argument("--xdo-only", action="store_true")
    parser.add_argument("--solvers", nargs="+", choices=TREE_SOLVERS, default=list(TREE_SOLVERS))
    parser.add_argument("--xdo", nargs="*", choices=[_name(*m, "-") for m in XDO_METHODS],
                        default=[_name(*m, "-") for m in XDO_METHODS])
    parser.add_argument("--cfr-shares", nargs="+", type=float, metavar="SHARE")
    parser.add_argument("--settle-growths", nargs="+", type=float, metavar="GROWTH")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    if not all(0 < share <= 1 for share in args.cfr_shares or ()):
        parser.error(f"--cfr-shares must be numbers in (0, 1]; got {args.cfr_shares}")
    if not all(0 <= growth <= 1 for growth in args.settle_growths or ()):
        parser.error(f"--settle-growths must be numbers in [0, 1]; got {args.settle_growths}")
    if args.repeats < 1:
        parser.error(f"--repeats must be a positive integer; got {args.repeats}")
    thresholds = tuple(float(t) for t in args.thresholds.split(","))
    print(f"compiled kernels loaded in {load_kernels():.2f} s", flush=True)
    for game in args.games:
        start = time.perf_counter()
        tree = psro.game_tree(game)
        walk = time.perf_counter() - start
        print(f"\n{game}: {tree.num_nodes:,} nodes, information sets "
              f"{' + '.join(f'{p.num_infosets:,}' for p in tree.players)}, walked in "
              f"{walk:.2f} s; {args.budget:g} s per method", flush=True)
        print("| method | " + " | ".join(f"to {t:g}" for t in thresholds) + " |")
        print("| --- |" + " --- |" * len(thresholds))
        _solver_rows(tree, () if args.xdo_only else args.solvers, thresholds, args)
        if not (args.skip_openspiel or args.xdo_only):
            _row("OpenSpiel C++ CFR+", _median([crossings_of(
                cfr_plus_curve(game, args.budget, min(thresholds), thresholds), thresholds,
                "wall_time_s", "iteration") for _ in range(args.repeats)], thresholds),
                thresholds)
        for solver, expansion in XDO_METHODS:
            if _name(solver, expansion, "-") not in args.xdo:
                continue
            _row(f"xdo, {_name(solver, expansion, ', ')} (PSRO family)",
                 _median([xdo(game, solver, expansion, thresholds, args.budget)
                          for _ in range(args.repeats)], thresholds), thresholds)


def _median(runs: list[dict], thresholds: tuple[float, ...]) -> dict:
    """Crossings measured ``--repeats`` times: each threshold's median seconds and its
    iterations (the same every time), where every run crossed it."""
    return {t: (float(np.median([run[t][0] for run in runs])), runs[0][t][1])
            for t in thresholds if all(t in run for run in runs)}


def _solver_rows(tree: SequenceFormGame, solvers: list[str], thresholds: tuple[float, ...],
                 args: argparse.Namespace) -> None:
    """The tree solvers' rows (the CFR-family double oracles once per ``--cfr-shares`` value,
    ``xdo_dcfr+`` once per ``--settle-growths`` value too), each measured ``--repeats`` times in
    turn: the median seconds of each crossing."""
    swept = {solver for solver, options in DOUBLE_ORACLES.items() if "variant" in options}
    settling = {solver for solver, options in DOUBLE_ORACLES.items()
                if "settled_variant" in options}
    shares, growths = args.cfr_shares or [CFR_SHARE], args.settle_growths or [SETTLE_GROWTH]
    methods = [(solver, share, growth) for solver in solvers
               for share in (shares if solver in swept else [CFR_SHARE])
               for growth in (growths if solver in settling else [SETTLE_GROWTH])]
    found: dict[tuple[str, float, float], list[dict]] = {method: [] for method in methods}
    for _ in range(args.repeats):
        for solver, share, growth in methods:
            solved = solve_tree(tree, solver, thresholds, args.budget, cfr_share=share,
                                settle_growth=growth)
            found[solver, share, growth].append(solved.crossings)
    for (solver, share, growth), runs in found.items():
        label = f"{solver}, share {share:g}" if args.cfr_shares and solver in swept else solver
        if args.settle_growths and solver in settling:
            label += f", settle growth {growth:g}"
        label += " (PSRO family)" if solver in DOUBLE_ORACLES else ""
        _row(label, _median([{t: (c["seconds"], c["iterations"]) for t, c in run.items()}
                             for run in runs], thresholds), thresholds)


def _name(solver: str, expansion: str, between: str) -> str:
    """An ``xdo`` row's name: the solver, and with the LP its expansion after ``between``."""
    return f"{solver}{between}{expansion}" if solver == "lp" else solver


def _row(method: str, found: dict, thresholds: tuple[float, ...]) -> None:
    """One table row, printed as soon as the method is done."""
    cells = [f"{found[t][0]:.3g} s ({found[t][1]:,})" if t in found else "-"
             for t in thresholds]
    print(f"| {method} | " + " | ".join(cells) + " |", flush=True)

if __name__ == "__main__":
    main()
