"""Cheaper Monte Carlo payoff entries, and what they do to the results, side by side in one
command: PSRO with PPO best responses on a game too large to walk, its payoff table filled

- ``all``: every new entry to the tolerance (the default; 95% half-width 0.02, at most 8,192
  episodes);
- ``support``: ``monte_carlo.refine = "support"``, new entries at ``min_episodes`` and only
  those the meta-strategy depends on refined to the tolerance;
- ``support + cap``: the same with ``monte_carlo.iteration_episodes`` (default 40,000).

    python experiments/bench_payoff_entries.py --out runs/bench-payoff-entries \\
        --backend processes --workers 2

Each is a method of one benchmark suite (large tier): the same game, seeds, best-response
budgets and env-step budget, the approximate exploitability of every final meta-policy at one
shared best-response budget, and every pair played head to head
(:mod:`psro.bench.evaluation`); the suite's report is written in ``OUT/report``. The table
printed at the end adds, per method and averaged over seeds, the wall time of a run, the share
of it spent on payoff entries (the iterations' ``evaluation_s``: Monte Carlo episodes and the
refinements), the training time (``oracle_s``) and the episodes played for the table. A rerun
continues where a killed one stopped.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from psro.bench import run_suite, write_suite_report
from psro.bench.folder import slug
from psro.bench.suites import Method, Suite, SuiteGame
from psro.cli.common import options
from psro.storage import checkpoint

GAME = "phantom_ttt(obstype=reveal-nothing)"
PPO = {"greedy": False}
"""The large tier's PSRO: members play their sampled policy."""


def suite(game: str, iterations: int, ppo_steps: int, cap: int, seeds: int,
          response_steps: int, estimates: dict | None = None, exact: bool = True) -> Suite:
    """The three table-filling methods as one large-tier suite game; ``estimates``: Monte
    Carlo options (tolerance, episodes) of all three; ``exact``: each final meta-policy
    measured exactly where the game has a compiled kernel (else the shared lower bound)."""
    base = {"oracle": "ppo", "algorithm": "psro", "meta_solver": "nash",
            "ppo": {**PPO, "env_steps": ppo_steps}}
    table = dict(estimates or {})
    methods = (Method("all", {**base, "monte_carlo": table}),
               Method("support", {**base, "monte_carlo": {**table, "refine": "support"}}),
               Method("support + cap", {**base, "monte_carlo": {
                   **table, "refine": "support", "iteration_episodes": cap}}))
    # two responses an iteration, plus the uniform members' iteration 0
    budget = 2 * ppo_steps * iterations
    label = "Phantom TTT" if game == GAME else game
    entry = SuiteGame(game, label, "large", methods, time_budget_s=7200,
                      env_steps=budget, thresholds=(), response_steps=response_steps,
                      exact=exact)
    return Suite("payoff-entries", (entry,), seeds=tuple(range(seeds)),
                 description="Monte Carlo payoff entries: all, support, support + cap")


def summary(out: Path, measured: Suite) -> list[dict]:
    """Per method, the means over seeds of what the runs spent and what they reached."""
    game = measured.games[0]
    folder = out / slug(game.label)
    duel = json.loads((folder / "head_to_head.json").read_text())
    rows = []
    for method in game.methods:
        runs, bounds = [], []
        for seed in measured.seeds:
            path = folder / slug(method.label) / f"seed-{seed}"
            runs.append(checkpoint.load(path).state.metrics)
            bounds.append(json.loads(path.with_name(f"{path.name}.bound.json").read_text()))
        wall = [r[-1]["wall_time_s"] for r in runs]
        entries = [sum(row["evaluation_s"] for row in r) for r in runs]
        rows.append({
            "method": method.label, "iterations": np.mean([r[-1]["iteration"] for r in runs]),
            "wall_s": np.mean(wall), "entries_s": np.mean(entries),
            "entries_share": np.mean(np.array(entries) / np.array(wall)),
            "oracle_s": np.mean([sum(row["oracle_s"] for row in r) for r in runs]),
            "episodes": np.mean([sum(row.get("payoff_episodes") or 0 for row in r)
                                 for r in runs]),
            "bound": np.mean([b["exploitability"] for b in bounds]),
            "bound_sd": np.std([b["exploitability"] for b in bounds], ddof=1)
            if len(bounds) > 1 else float("nan"),
            "vs_all": next((p for p in duel["pairs"] if p["a"] == "all"
                            and p["b"] == method.label), None)})
    return rows


def print_table(rows: list[dict], stream=sys.stdout) -> None:
    """The side-by-side table (ratios against ``all``, the default)."""
    base = rows[0]
    print("| method | iterations | wall time a run | payoff entries (share) | training | "
          "payoff episodes | episodes vs all | exploitability (sd over seeds) | "
          "head to head vs all |", file=stream)
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |", file=stream)
    for row in rows:
        duel = row["vs_all"]
        versus = "-" if duel is None else \
            f"{-duel['score']:+.3f} +- {duel['half_width']:.3f}"
        print(f"| {row['method']} | {row['iterations']:.0f} | {row['wall_s']:.0f} s | "
              f"{row['entries_s']:.0f} s ({row['entries_share']:.0%}) | "
              f"{row['oracle_s']:.0f} s | {row['episodes']:,.0f} | "
              f"{row['episodes'] / base['episodes']:.2f}x | "
              f"{row['bound']:.3f} ({row['bound_sd']:.3f}) | {versus} |", file=stream)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/bench-payoff-entries")
    parser.add_argument("--game", default=GAME)
    parser.add_argument("--iterations", type=int, default=10,
                        help="PSRO iterations a run (its env-step budget)")
    parser.add_argument("--ppo-steps", type=int, default=60_000,
                        help="env steps of each best response")
    parser.add_argument("--cap", type=int, default=40_000,
                        help="iteration_episodes of the capped method")
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--response-steps", type=int, default=200_000,
                        help="env steps of the shared lower bound's best responses")
    parser.add_argument("--lower-bound", action="store_true",
                        help="measure the final meta-policies by the shared lower bound even "
                             "where a compiled kernel measures them exactly")
    parser.add_argument("--monte-carlo", action="append", metavar="KEY=VALUE",
                        help="Monte Carlo option of every method (tolerance, min_episodes, "
                             "max_episodes, batch); repeatable")
    parser.add_argument("--backend", default="processes")
    parser.add_argument("--workers", type=int,
                        help="workers of --backend processes or ray (default: one per CPU)")
    args = parser.parse_args(argv)
    measured = suite(args.game, args.iterations, args.ppo_steps, args.cap, args.seeds,
                     args.response_steps, options(args.monte_carlo, "--monte-carlo"),
                     not args.lower_bound)
    out = Path(args.out)
    run_suite(measured, out, {"backend": args.backend, "workers": args.workers})
    write_suite_report(out)
    print_table(summary(out, measured))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
