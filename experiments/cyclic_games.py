"""Experiment 1: self-play versus PSRO on cyclic games.

Run: ``python experiments/cyclic_games.py [--iterations 30] [--out runs/cyclic] [--quick]``.

Exact best responses on rock-paper-scissors, biased RPS, the disc game and a spinning top,
with five meta-solvers: pure self-play (``latest``) cycles and stays exploitable, the 80/20
``latest_mix`` does little better, ``uniform`` (fictitious play) converges slowly, ``pfsp``
chases the opponents it loses to, and Nash PSRO converges. Writes one run directory per
(game, solver), ``cyclic.png`` with all curves, and a report per game.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import curves_figure, report, run_all

import psro

GAMES = ["rps", "biased_rps", "disc(n=20,seed=0)", "spinning_top(n=50,cycle=4,seed=0)"]
SOLVERS = ["latest", "latest_mix", "uniform", "pfsp", "nash"]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--out", default="runs/cyclic")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 games, 4 iterations")
    args = parser.parse_args(argv)
    out = Path(args.out)
    games = GAMES[:2] if args.quick else GAMES
    iterations = 4 if args.quick else args.iterations
    groups = {}
    for game in games:
        tag = game.split("(")[0]
        configs = {f"{tag}-{solver}": psro.RunConfig(game=game, meta_solver=solver,
                                                     iterations=iterations)
                   for solver in SOLVERS}
        results = run_all(configs, out)
        groups[game] = {name.split("-", 1)[1]: rows for name, rows in results.items()}
        report(out, list(configs), folder=f"report-{tag}")
    curves_figure(groups, out / "cyclic.png")
    print(f"figure: {out / 'cyclic.png'}; reports: {out}/report-*/report.html")


if __name__ == "__main__":
    main()
