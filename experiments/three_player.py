"""Experiment 3: three-player Kuhn poker with n-player meta-solvers (PRD, alpha-rank, CCE).

Run: ``python experiments/three_player.py [--iterations 12] [--out runs/three_player]
[--quick]``. Exact best responses; NashConv of the meta-policy is exact (the tree is walked).
Writes the run directories, ``three_player.png`` (NashConv curves) and a report. alpha-rank's
chain has one state per profile (13^3 = 2197 at 12 iterations, a second per solve; it grows
steeply beyond that).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import curves_figure, report, run_all

import psro

SOLVERS = {"prd": {"iterations": 3000}, "alpharank": {}, "cce": {}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--out", default="runs/three_player")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 iterations")
    args = parser.parse_args(argv)
    out = Path(args.out)
    iterations = 2 if args.quick else args.iterations
    configs = {f"kuhn3-{s}": psro.RunConfig(game="kuhn_poker(players=3)", meta_solver=s,
                                            meta_solver_options=o, iterations=iterations)
               for s, o in SOLVERS.items()}
    results = run_all(configs, out)
    curves_figure({"3-player Kuhn poker": {n.split("-", 1)[1]: r for n, r in results.items()}},
                  out / "three_player.png", key="nash_conv", ylabel="NashConv")
    report(out, list(configs))
    print(f"figure: {out / 'three_player.png'}; report: {out / 'report' / 'report.html'}")


if __name__ == "__main__":
    main()
