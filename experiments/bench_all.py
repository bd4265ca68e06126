"""``make bench``: the benchmarks of the solver, exact-PSRO, exploitability, variant and PPO
issues in one process, with one summary table of the figures and the ratios against OpenSpiel
(its LP, nash_conv and psro_v2).

Run: ``python experiments/bench_all.py [--quick] [--full]``. ``--quick`` shrinks every budget
(a smoke run of a few minutes); ``--full`` adds the 60-minute Leduc PPO run. Each script can
also be run alone for its detailed tables (see experiments/README.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bench_psro_exact  # noqa: E402
import pyspiel  # noqa: E402

import psro  # noqa: E402
import solvers  # noqa: E402
from games.simulation import random_playout_rate  # noqa: E402
from psro.extensive_form.members import UniformMember  # noqa: E402
from psro.rl.ppo import PPOConfig, train_best_response  # noqa: E402


def _row(rows, what, ours, reference, ratio, target, met):
    rows.append((what, ours, reference, ratio, target, "yes" if met else "NO"))


def solver_rows(rows, quick: bool) -> None:
    from bench_solvers import _openspiel_lp

    n = 200 if quick else 500
    A = np.random.default_rng(0).standard_normal((n, n))
    start = time.perf_counter()
    x, y, _ = solvers.zero_sum_nash(A)
    ours = time.perf_counter() - start
    nash_conv = solvers.nash_conv(A, [x, y])
    theirs, _ = _openspiel_lp(A)
    _row(rows, f"zero-sum {n}x{n} LP (s)", f"{ours:.3f} (NashConv {nash_conv:.1e})",
         f"{theirs:.3f} OpenSpiel LP", f"{theirs / ours:.1f}x", ">= 10x, NashConv <= 1e-9",
         theirs / ours >= 10 and nash_conv <= 1e-9)
    rng = np.random.default_rng(1)
    for size, limit in ((50, 0.1), (200, 1.0)):
        B1, B2 = rng.standard_normal((size, size)), rng.standard_normal((size, size))
        start = time.perf_counter()
        solvers.nash([B1, B2], method="lemke_howson")
        took = time.perf_counter() - start
        _row(rows, f"Lemke-Howson {size}x{size} general-sum (s)", f"{took:.3f}", "-", "-",
             f"< {limit} s", took < limit)


def exact_rows(rows, quick: bool) -> None:
    kuhn_its = 8 if quick else 20
    ours, total = bench_psro_exact.run_ours("kuhn_poker", kuhn_its)
    theirs = bench_psro_exact.run_psro_v2("kuhn_poker", kuhn_its, budget=600)
    _row(rows, f"Kuhn exact PSRO, {kuhn_its} iterations: exploitability",
         f"{ours[-1][1]:.1e} in {total:.2f} s", f"{theirs[-1][1]:.1e} psro_v2 in "
         f"{theirs[-1][2]:.1f} s", f"{theirs[-1][2] / total:.0f}x faster",
         "<= 1e-9 in < 1 s", ours[-1][1] <= 1e-9 and total < 1)
    leduc_its = 5 if quick else 30
    ours, _ = bench_psro_exact.run_ours("leduc_poker", leduc_its)
    theirs = bench_psro_exact.run_psro_v2("leduc_poker", leduc_its, budget=900)
    done = min(len(theirs), leduc_its)
    per_ours = bench_psro_exact._per_iteration(ours, done)
    per_theirs = bench_psro_exact._per_iteration(theirs, done)
    _row(rows, f"Leduc exact PSRO, time per iteration (1..{done})", f"{per_ours * 1e3:.1f} ms",
         f"{per_theirs * 1e3:.0f} ms psro_v2", f"{per_theirs / per_ours:.0f}x", ">= 10x",
         per_theirs / per_ours >= 10)
    seconds = 20 if quick else 120
    rows_long, _ = bench_psro_exact.run_ours("leduc_poker", 100_000, time_budget=seconds)
    hit = next((t for _, e, t in rows_long if e <= 0.05), None)
    _row(rows, f"Leduc exact PSRO, exploitability within {seconds} s",
         f"{rows_long[-1][1]:.3g}" + (f" (<= 0.05 at {hit:.0f} s)" if hit else ""), "-", "-",
         "<= 0.05 within 120 s", hit is not None)


def exploitability_rows(rows, quick: bool) -> None:
    import bench_exploitability as bench
    from open_spiel.python import policy as os_policy

    for name in ("leduc_poker",) + (() if quick else ("liars_dice",)):
        game = pyspiel.load_game(name)
        policy = bench.random_policy(game, seed=0)
        psro.game_tree.cache_clear()
        first, _ = bench.timed(lambda: psro.exploitability(name, policy))  # noqa: B023
        per, _ = bench.timed(lambda: psro.exploitability(name, policy), 5)  # noqa: B023
        cpp_policy = os_policy.python_policy_to_pyspiel_policy(policy)
        cpp, _ = bench.timed(lambda: pyspiel.nash_conv(game, cpp_policy))  # noqa: B023
        _row(rows, f"{name} exploitability of a policy, per evaluation",
             f"{per * 1e3:.1f} ms (walk + first {first:.2f} s)",
             f"{cpp * 1e3:.0f} ms C++ nash_conv", f"{cpp / per:.0f}x",
             ">= 10x; walk + evaluation < C++", cpp / per >= 10 and first < cpp)


def variant_rows(rows, quick: bool) -> None:
    budget = 30 if quick else 120
    found = {}
    for algorithm in ("psro", "anytime"):
        result = psro.PSRO("leduc_poker", "exact", "nash", algorithm=algorithm).run(
            iterations=100_000, time_budget_s=budget, target_exploitability=0.05)
        ex = [r["exploitability"] for r in result]
        found[algorithm] = (result[-1]["iteration"] if ex[-1] <= 0.05 else None,
                            any(b > a + 1e-9 for a, b in zip(ex, ex[1:], strict=False)))
    (ours, rose), (theirs, _) = found["anytime"], found["psro"]
    _row(rows, "Leduc exact, iterations to 0.05: anytime vs psro",
         f"{ours} (rose: {'yes' if rose else 'no'})", f"{theirs} psro", "-",
         "fewer than psro, never rises",
         ours is not None and (theirs is None or ours < theirs) and not rose)


def ppo_rows(rows, quick: bool, full: bool) -> None:
    for name in ("kuhn_poker", "leduc_poker"):
        game = pyspiel.load_game(name)
        raw = random_playout_rate(game, seconds=2.0)
        _, diag = train_best_response(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                                      PPOConfig(env_steps=20_000 if quick else 60_000), seed=0)
        rollout = float(np.median([d["rollout_steps_per_s"] for d in diag]))
        _row(rows, f"{name} PPO rollout env steps/s", f"{rollout:,.0f}",
             f"{raw:,.0f} raw pyspiel", f"{rollout / raw:.0%}", ">= 30% of raw",
             rollout / raw >= 0.3)
    budgets = [("kuhn_poker", 60 if quick else 600, 0.05)]
    if full:
        budgets.append(("leduc_poker", 3600, 0.3))
    for name, seconds, target in budgets:
        run = psro.PSRO(name, "ppo", "nash", seed=0, backend="processes")
        result = run.run(iterations=100_000, time_budget_s=seconds)
        hit = next((r for r in result if r["exploitability"] <= target), None)
        _row(rows, f"{name} PSRO with PPO, {seconds} s", f"{result[-1]['exploitability']:.3g}"
             + (f" (<= {target} at {hit['wall_time_s']:.0f} s)" if hit else ""), "-", "-",
             f"<= {target} within {seconds} s", hit is not None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small budgets (smoke run)")
    parser.add_argument("--full", action="store_true", help="add the 60-minute Leduc PPO run")
    args = parser.parse_args()
    rows: list[tuple] = []
    solver_rows(rows, args.quick)
    exact_rows(rows, args.quick)
    exploitability_rows(rows, args.quick)
    variant_rows(rows, args.quick)
    ppo_rows(rows, args.quick, args.full)
    widths = [max(len(str(r[i])) for r in rows + [("what", "ours", "reference", "ratio",
                                                       "target", "met")]) for i in range(6)]
    header = ("what", "ours", "reference", "ratio", "target", "met")
    print("\n" + " | ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    print("-+-".join("-" * w for w in widths))
    for row in rows:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
