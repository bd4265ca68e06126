"""How far the approximate exploitability under-reports, where the truth is known.

For run directories of games whose exploitability is known exactly (PPO runs of games small
enough to walk, or of games with a compiled kernel, such as liar's dice with 2 dice of 5
sides), the final meta-policy's approximate exploitability, the PPO lower bound that
games too large to walk get (:func:`psro.evaluation.sampled.ppo_lower_bound`: a fresh PPO best
response per player, Monte Carlo values), is measured at several best-response budgets and
seeds and printed beside the exact value, with their ratio.

Run: ``python experiments/bench_lower_bound.py RUN_DIR [RUN_DIR ...] [--budgets 25000,100000]
[--seeds 2] [--ppo KEY=VALUE ...]``; writes ``lower_bound.csv`` next to the first run unless
``--out FILE``. A run of a benchmark suite whose exact value the suite recorded beside it
(``seed-N.bound.json``) is not evaluated again. ``--ppo`` sets the best responses' PPO
options (default: the lower bound's, :func:`psro.rl.config.response_config`, the budget
aside).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

import games  # noqa: E402
import psro  # noqa: E402
from games.simulation import turn_based  # noqa: E402
from psro.backends import LocalBackend  # noqa: E402
from psro.cli.common import options  # noqa: E402
from psro.evaluation.sampled import ppo_lower_bound  # noqa: E402
from psro.rl.config import response_config  # noqa: E402
from psro.seeds import derive_seed  # noqa: E402


def recorded_exact(run_dir: Path, iteration: int) -> float | None:
    """The exact exploitability a benchmark suite recorded beside the run
    (``seed-N.bound.json``, measured by a compiled kernel on the run's final iteration), so
    that it is not computed again (minutes on the board games); None where there is none."""
    path = run_dir.with_name(f"{run_dir.name}.bound.json")
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if saved.get("exploitability_kind") != "exact" or \
            saved.get("key", {}).get("iteration") != iteration:
        return None
    return float(saved["exploitability"])


def measure(run_dir: Path, budgets: list[int], seeds: int,
            ppo: dict | None = None) -> list[dict]:
    """Rows ``{game, run, exact, budget, bound, half_width, ratio, seconds}`` for one run."""
    run = psro.load_run(run_dir)
    exact = recorded_exact(run_dir, run.iteration)
    if exact is None:
        exact = psro.exploitability(run.config.game, run.meta_policy()).exploitability
    tree = run.tree if run.evaluation == "exact" else None  # sampled: its networks play
    seats = [[m.actor(tree) for m in pop] for pop in run.population]
    game = turn_based(games.load(run.config.game).pyspiel_game)
    rows = []
    for budget in budgets:
        values, start = [], time.perf_counter()
        for s in range(seeds):
            config = response_config({**(ppo or {}), "env_steps": budget})
            row = ppo_lower_bound(game, seats, run.mixtures, config,
                                  [derive_seed(s, 31337, p) for p in range(3)], {},
                                  LocalBackend())
            values.append(row["exploitability"])
        mean = float(np.mean(values))
        half = float(stats.t.ppf(0.975, seeds - 1) * np.std(values, ddof=1) / math.sqrt(seeds)) \
            if seeds > 1 else math.nan
        rows.append({"game": run.config.game, "run": str(run_dir), "exact": exact,
                     "budget": budget, "bound": mean, "half_width": half,
                     "ratio": mean / exact if exact > 0 else math.nan,
                     "seconds": (time.perf_counter() - start) / seeds})
        print(f"{run.config.game:14s} {run_dir.name:10s} exact {exact:.4f}  budget "
              f"{budget:>9,}  lower bound {mean:.4f} +- {half:.3f}  ratio {rows[-1]['ratio']:.2f}"
              f"  ({rows[-1]['seconds']:.0f} s a bound)", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="run directories of walked games (PPO runs)")
    parser.add_argument("--budgets", default="25000,100000,400000",
                        help="best-response budgets in env steps, comma-separated")
    parser.add_argument("--seeds", type=int, default=2, help="seeds per budget")
    parser.add_argument("--ppo", action="append", default=[], metavar="KEY=VALUE",
                        help="PPO option of the best responses (repeatable)")
    parser.add_argument("--out", help="CSV file (default: lower_bound.csv beside the first run)")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    ppo = options(args.ppo, "--ppo")
    rows = [row for d in args.runs for row in measure(Path(d), budgets, args.seeds, ppo)]
    out = Path(args.out) if args.out else Path(args.runs[0]).parent / "lower_bound.csv"
    with out.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
