"""Benchmark: the same PSRO run on the local, processes and ray backends, side by side.

Run: ``python experiments/bench_backends.py [--game leduc_poker] [--iterations 4]
[--env-steps N]``. Runs PSRO with the PPO oracle (default options, seed 0) for the same
iterations on ``local``, ``processes`` with 1 and 2 workers and ``ray`` with 1 and 2 workers,
in this process, one after the other, and prints per backend the oracle phase's seconds
(summed over iterations), the whole run's seconds (starting the workers included), the final
exploitability (identical on every backend: each task carries its own seed), the speed-up of
2 workers over 1 on the oracle phase, and Ray's overhead against ``processes`` with the same
workers. Then, from the measured task durations, the iteration time expected with more
workers (what stays serial: evaluation, meta-solve, exploitability and writing).

Targets (issue 12): 2 workers at least 1.7x faster than 1 on the oracle phase on a 2-core
machine; Ray's overhead per iteration under 10% of ``processes``'.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402

CONFIGS = (("local", 1), ("processes", 1), ("processes", 2), ("ray", 1), ("ray", 2))


def measure(game: str, backend: str, workers: int, iterations: int, ppo: dict) -> dict:
    """One run; its oracle seconds, serial seconds and total seconds."""
    start = time.perf_counter()
    run = psro.PSRO(game, "ppo", "nash", backend=backend, workers=workers, seed=0, ppo=ppo)
    started = time.perf_counter() - start  # Ray starts here; a process pool on first use
    rows = run.run(iterations=iterations)
    total = time.perf_counter() - start
    steps = rows[1:]
    oracle = sum(r["oracle_s"] for r in steps)
    serial = sum(r["evaluation_s"] + r["meta_solver_s"] + r["exploitability_s"] + r["write_s"]
                 for r in steps)
    return {"oracle_s": oracle, "serial_s": serial, "total_s": total, "start_s": started,
            "exploitability": rows[-1]["exploitability"], "iterations": len(steps)}


def expected_iteration(task_s: float, tasks: int, serial_s: float, workers: int) -> float:
    """Iteration time when ``tasks`` tasks of ``task_s`` seconds each run on ``workers``
    workers (in waves), plus the serial part."""
    return math.ceil(tasks / workers) * task_s + serial_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--env-steps", type=int, help="PPO env_steps per best response")
    args = parser.parse_args()
    ppo = {"env_steps": args.env_steps} if args.env_steps else {}
    print(f"{args.game}, PPO oracle, {args.iterations} iterations, seed 0", flush=True)
    print(f"{'backend':>10} {'workers':>8} {'start s':>8} {'oracle s':>9} {'serial s':>9} "
          f"{'total s':>8} {'s/iteration':>12} {'exploitability':>15}", flush=True)
    results = {}
    for backend, workers in CONFIGS:
        r = measure(args.game, backend, workers, args.iterations, ppo)
        results[backend, workers] = r
        print(f"{backend:>10} {workers:>8} {r['start_s']:8.2f} {r['oracle_s']:9.2f} "
              f"{r['serial_s']:9.2f} "
              f"{r['total_s']:8.2f} {r['total_s'] / r['iterations']:12.2f} "
              f"{r['exploitability']:15.12f}", flush=True)
    same = len({round(r["exploitability"], 12) for r in results.values()}) == 1
    print(f"final exploitability identical on every backend: {'yes' if same else 'NO'}")
    for backend in ("processes", "ray"):
        one, two = results[backend, 1], results[backend, 2]
        print(f"{backend}: 2 workers are {one['oracle_s'] / two['oracle_s']:.2f}x faster than "
              f"1 on the oracle phase")
    for workers in (1, 2):
        ray, proc = results["ray", workers], results["processes", workers]
        phase = ray["oracle_s"] - proc["oracle_s"]
        whole = ray["total_s"] - proc["total_s"]
        print(f"ray overhead against processes, {workers} worker(s): oracle phase "
              f"{100 * phase / proc['oracle_s']:+.1f}% ({phase / args.iterations:+.2f} s per "
              f"iteration); whole run {100 * whole / proc['total_s']:+.1f}% (Ray's start, "
              f"{ray['start_s']:.1f} s, once per run, included)")
    local = results["local", 1]
    task_s = local["oracle_s"] / local["iterations"] / 2  # one task per player
    serial_s = local["serial_s"] / local["iterations"]
    print(f"\nexpected seconds per iteration from the measured task ({task_s:.2f} s) and "
          f"serial part ({serial_s:.2f} s), for 2 tasks per iteration (one best response per "
          f"player) and 16 (e.g. rectified with 8 members in each player's Nash support)")
    for workers in (1, 2, 8, 32, 128):
        print(f"  {workers:>4} workers: {expected_iteration(task_s, 2, serial_s, workers):8.2f} s"
              f"  {expected_iteration(task_s, 16, serial_s, workers):8.2f} s")


if __name__ == "__main__":
    main()
