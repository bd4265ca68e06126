"""Benchmark: PSRO with the PPO oracle on Kuhn and Leduc poker; rollout speed.

Run: ``python experiments/bench_psro_ppo.py [--kuhn-seconds 600] [--leduc-seconds 3600]
[--out runs/bench_ppo]``. Prints exploitability (exact, via tabularisation) against wall time
and environment steps, and the rollout engine's environment steps per second beside plain
pyspiel random playouts of the same game (the limit), measured in this process.

Targets (issue 3), on the 2-core machine: Kuhn exploitability <= 0.05 within 10 minutes;
Leduc <= 0.3 within 60 minutes; rollout steps/s at least 30% of the raw playout rate.
OpenSpiel psro_v2's RL oracle needs JAX, chex, optax and haiku; where they import, pass
``--psro-v2`` to run it on Kuhn at the same per-best-response episode budget.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyspiel  # noqa: E402

import psro  # noqa: E402
from games.simulation import random_playout_rate  # noqa: E402
from psro.neural import UniformActor  # noqa: E402
from psro.ppo import PPOConfig, train_best_response  # noqa: E402


def rollout_speed(game_name: str) -> None:
    game = pyspiel.load_game(game_name)
    raw = random_playout_rate(game, seconds=3.0)
    config = PPOConfig(env_steps=40_000)
    start = time.perf_counter()
    _, diagnostics = train_best_response(game, 0, [None, [UniformActor()]], [None, np.ones(1)],
                                         config, seed=0)
    total = time.perf_counter() - start
    steps = diagnostics[-1]["env_steps"]
    rollout = np.median([d["rollout_steps_per_s"] for d in diagnostics])
    print(f"{game_name}: raw pyspiel random playouts {raw:,.0f} steps/s; PPO rollouts "
          f"{rollout:,.0f} steps/s ({rollout / raw:.0%} of raw); PPO training end to end "
          f"{steps / total:,.0f} steps/s including updates")


def psro_curve(game_name: str, seconds: float, out: str | None, iterations: int) -> None:
    run = psro.PSRO(game_name, "ppo", "nash", seed=0,
                    out=None if out is None else os.path.join(out, game_name))
    print(f"\n{game_name}: PSRO, PPO oracle (defaults), nash meta-solver, budget {seconds:.0f} s")
    print(f"{'iter':>5} {'wall s':>8} {'env steps':>11} {'exploitability':>15}")

    def show(_, row):
        print(f"{row['iteration']:5d} {row['wall_time_s']:8.1f} {row['env_steps']:11,d} "
              f"{row['exploitability']:15.4f}", flush=True)

    run.callbacks.append(show)
    rows = run.run(iterations=iterations, time_budget_s=seconds)
    for target in (0.3, 0.1, 0.05):
        hit = next((r for r in rows if r["exploitability"] <= target), None)
        where = (f"iteration {hit['iteration']}, {hit['wall_time_s']:.0f} s, "
                 f"{hit['env_steps']:,} env steps") if hit else "not reached"
        print(f"  exploitability <= {target}: {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kuhn-seconds", type=float, default=600.0)
    parser.add_argument("--leduc-seconds", type=float, default=3600.0)
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--out", default=None, help="also write the run directories here")
    parser.add_argument("--skip-leduc", action="store_true")
    args = parser.parse_args()
    for name in ("kuhn_poker", "leduc_poker"):
        rollout_speed(name)
    psro_curve("kuhn_poker", args.kuhn_seconds, args.out, args.iterations)
    if not args.skip_leduc:
        psro_curve("leduc_poker", args.leduc_seconds, args.out, args.iterations)


if __name__ == "__main__":
    main()
