"""Experiment 4: a two-player general-sum OpenSpiel game (sheriff) with nashpy's vertex
enumeration as the meta-solver, beside our Lemke-Howson and PRD.

Run: ``python experiments/general_sum.py [--iterations 12] [--out runs/general_sum]
[--quick]``. Exact best responses; NashConv is exact. Vertex enumeration is exponential in the
population size, so keep iterations modest. Writes runs, ``general_sum.png`` and a report.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import curves_figure, report, run_all

import psro

SOLVERS = {
    "nashpy_vertex": ("nash", {"method": "vertex_enumeration"}),
    "lemke_howson": ("nash", {"method": "lemke_howson"}),
    "prd": ("prd", {"iterations": 3000}),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="sheriff")
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--out", default="runs/general_sum")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 iterations")
    args = parser.parse_args(argv)
    out = Path(args.out)
    iterations = 2 if args.quick else args.iterations
    configs = {f"{args.game}-{label}": psro.RunConfig(game=args.game, meta_solver=name,
                                                      meta_solver_options=options,
                                                      iterations=iterations)
               for label, (name, options) in SOLVERS.items()}
    results = run_all(configs, out)
    curves_figure({f"{args.game} (general-sum)": {n.split("-", 1)[1]: r
                                                  for n, r in results.items()}},
                  out / "general_sum.png", key="nash_conv", ylabel="NashConv")
    report(out, list(configs))
    print(f"figure: {out / 'general_sum.png'}; report: {out / 'report' / 'report.html'}")


if __name__ == "__main__":
    main()
