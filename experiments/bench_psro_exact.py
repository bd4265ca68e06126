"""Benchmark: exact PSRO here beside OpenSpiel's psro_v2 with its BestResponseOracle.

Run: ``python experiments/bench_psro_exact.py [--kuhn-iterations 20] [--leduc-iterations 30]
[--psro-v2-budget 600]``. Both run in this process, Nash meta-solver; psro_v2 uses
``sims_per_entry=1000`` (its payoff table is sampled) and is measured with OpenSpiel's
``PolicyAggregator`` + ``exploitability.nash_conv``, as its example script does. psro_v2 stops
early once ``--psro-v2-budget`` seconds are spent on a game; per-iteration times are then
compared over the iterations both completed. Prints exploitability and time per iteration for
both, their ratio, and the Leduc run of ours continued to 120 s.

Targets (issue 2): Kuhn exploitability <= 1e-9 in under 1 s total; Leduc at least 10x less time
per iteration than psro_v2, and exploitability <= 0.05 within 120 s.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402


def run_ours(game: str, iterations: int, time_budget: float | None = None):
    start = time.perf_counter()
    run = psro.PSRO(game, "exact", "nash")
    rows = run.run(iterations=iterations, time_budget_s=time_budget)
    total = time.perf_counter() - start
    return [(r["iteration"], r["exploitability"], r["wall_time_s"]) for r in rows], total


def run_psro_v2(game_name: str, iterations: int, budget: float, sims_per_entry: int = 1000):
    import pyspiel
    from open_spiel.python import policy
    from open_spiel.python.algorithms import exploitability, policy_aggregator
    from open_spiel.python.algorithms.psro_v2 import best_response_oracle, psro_v2

    np.random.seed(0)
    game = pyspiel.load_game(game_name)
    start = time.perf_counter()
    random_policy = policy.TabularPolicy(game)
    oracle = best_response_oracle.BestResponseOracle(game=game, policy=random_policy)
    agents = [random_policy.__copy__() for _ in range(game.num_players())]
    with contextlib.redirect_stdout(io.StringIO()):  # psro_v2 prints its settings
        solver = psro_v2.PSROSolver(game, oracle, initial_policies=agents,
                                    sims_per_entry=sims_per_entry,
                                    meta_strategy_method="nash", symmetric_game=False,
                                    sample_from_marginals=True,
                                    training_strategy_selector="probabilistic", rectifier="")
    rows = []
    measure = 0.0
    for it in range(1, iterations + 1):
        with contextlib.redirect_stdout(io.StringIO()):
            solver.iteration()
        t = time.perf_counter()
        aggregator = policy_aggregator.PolicyAggregator(game)
        aggregated = aggregator.aggregate(range(game.num_players()), solver.get_policies(),
                                          solver.get_meta_strategies())
        expl = exploitability.nash_conv(game, aggregated) / game.num_players()
        measure += time.perf_counter() - t
        rows.append((it, expl, time.perf_counter() - start - measure))
        if time.perf_counter() - start > budget:
            break
    return rows


def _per_iteration(rows, upto):
    """Mean seconds per iteration over iterations 1..upto (time excludes measurement for
    psro_v2; ours includes its exact exploitability, which is part of every iteration)."""
    times = {it: t for it, _, t in rows}
    first = times.get(0, 0.0)
    return (times[upto] - first) / upto


def compare(game: str, iterations: int, budget: float) -> None:
    ours, total = run_ours(game, iterations)
    theirs = run_psro_v2(game, iterations, budget)
    done = min(len(theirs), iterations)
    print(f"\n{game}: {iterations} iterations (psro_v2 completed {len(theirs)})")
    print(f"{'iter':>5} | {'ours expl':>10} {'ours s':>8} | {'psro_v2 expl':>12} {'psro_v2 s':>9}")
    by_iter = {it: (e, t) for it, e, t in theirs}
    for it, e, t in ours:
        if it == 0 or (it % max(1, iterations // 10) and it != iterations):
            continue
        te, tt = by_iter.get(it, (float("nan"), float("nan")))
        print(f"{it:5d} | {e:10.3g} {t:8.3f} | {te:12.3g} {tt:9.2f}")
    ours_per = _per_iteration(ours, done)
    theirs_per = _per_iteration(theirs, done)
    print(f"time per iteration over iterations 1..{done}: ours {ours_per * 1e3:.2f} ms, "
          f"psro_v2 {theirs_per * 1e3:.1f} ms, ratio {theirs_per / ours_per:.0f}x; "
          f"ours total {total:.2f} s (incl. game walk), final exploitability "
          f"ours {ours[-1][1]:.3g} / psro_v2 {theirs[-1][1]:.3g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kuhn-iterations", type=int, default=20)
    parser.add_argument("--leduc-iterations", type=int, default=30)
    parser.add_argument("--psro-v2-budget", type=float, default=600.0,
                        help="seconds psro_v2 may spend per game before it is cut off")
    parser.add_argument("--leduc-seconds", type=float, default=120.0,
                        help="time budget for our long Leduc run (target: <= 0.05 within 120 s)")
    args = parser.parse_args()
    compare("kuhn_poker", args.kuhn_iterations, args.psro_v2_budget)
    compare("leduc_poker", args.leduc_iterations, args.psro_v2_budget)
    rows, total = run_ours("leduc_poker", 100000, time_budget=args.leduc_seconds)
    hit = next(((it, t) for it, e, t in rows if e <= 0.05), None)
    print(f"\nleduc_poker, ours for up to {args.leduc_seconds:.0f} s: {rows[-1][0]} iterations, "
          f"final exploitability {rows[-1][1]:.4g}; " +
          (f"<= 0.05 first at iteration {hit[0]} after {hit[1]:.1f} s" if hit
           else "never <= 0.05"))


if __name__ == "__main__":
    main()
