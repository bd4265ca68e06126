"""Experiment 2: Kuhn and Leduc poker, exact and PPO oracles, seven meta-solvers.

Run: ``python experiments/poker.py [--games kuhn_poker leduc_poker] [--oracles exact ppo]
[--iterations 50] [--ppo-iterations 20] [--ppo-env-steps 60000] [--out runs/poker] [--quick]``.

Compares nash, uniform, prd, alpharank, latest_mix, pfsp and rectified on exploitability curves
(exact: the trees are walked; PPO networks are tabularised). Writes one run directory per
(game, oracle, solver), ``poker.png`` with all curves, and a report per (game, oracle).
The exact runs take seconds; the PPO runs about ``iterations x 2 x env_steps / 20k`` seconds
each (a Leduc PPO sweep at the defaults takes hours; ``--ppo-iterations`` trims it).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import curves_figure, report, run_all

import psro

SOLVERS = {
    "nash": {}, "uniform": {}, "prd": {"iterations": 3000}, "alpharank": {},
    "latest_mix": {}, "pfsp": {}, "rectified": {},
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["kuhn_poker", "leduc_poker"])
    parser.add_argument("--oracles", nargs="+", default=["exact", "ppo"])
    parser.add_argument("--iterations", type=int, default=50, help="exact-oracle iterations")
    parser.add_argument("--ppo-iterations", type=int, default=20)
    parser.add_argument("--ppo-env-steps", type=int, default=60_000)
    parser.add_argument("--solvers", nargs="+", default=list(SOLVERS))
    parser.add_argument("--out", default="runs/poker")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: Kuhn, 3 iterations, tiny PPO budget")
    args = parser.parse_args(argv)
    out = Path(args.out)
    games = ["kuhn_poker"] if args.quick else args.games
    groups = {}
    for game in games:
        for oracle in args.oracles:
            exact = oracle == "exact"
            iterations = 3 if args.quick else (args.iterations if exact else args.ppo_iterations)
            ppo = {} if exact else {"env_steps": 3000 if args.quick else args.ppo_env_steps}
            configs = {f"{game}-{oracle}-{s}": psro.RunConfig(
                game=game, oracle=oracle, meta_solver=s, meta_solver_options=SOLVERS[s],
                iterations=iterations, ppo=ppo) for s in args.solvers}
            results = run_all(configs, out)
            groups[f"{game}, {oracle} oracle"] = {n.rsplit("-", 1)[1]: r
                                                  for n, r in results.items()}
            report(out, list(configs), folder=f"report-{game}-{oracle}")
    curves_figure(groups, out / "poker.png")
    print(f"figure: {out / 'poker.png'}; reports: {out}/report-*/report.html")


if __name__ == "__main__":
    main()
