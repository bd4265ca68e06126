"""Where a PPO iteration's time goes: rollouts, updates, tabularisation, payoff estimation,
exploitability, writing, beside raw pyspiel playouts of the same game in the same process.

    python experiments/bench_ppo_profile.py --game leduc_poker --iterations 4
    python experiments/bench_ppo_profile.py --game "phantom_ttt(obstype=reveal-nothing)" \\
        --iterations 2 --ppo greedy=false --monte-carlo tolerance=0.05 \\
        --monte-carlo max_episodes=2048

The run is profiled with cProfile on the local backend (every part in this process, so every
part is seen; the processes backend runs the same code in workers). Iterations 0 (the uniform
members) and 1 (whose first PPO run imports torch's optimiser machinery, about 3 s once per
process) are left out. Each part is the cumulative time of the function that does it:

- rollouts: ``Collector.collect`` (the learner's and its opponents' moves, the network's
  forward passes while acting, episode bookkeeping);
- PPO updates: ``_ppo_update`` (advantages, minibatch forward and backward passes, Adam);
- tabularisation: ``tabularise`` (a network's action probabilities at every information set,
  on walked games);
- payoff entries: the evaluator's ``extend`` (exact products of realization plans, or Monte
  Carlo episodes on games too large to walk);
- exploitability: the evaluator's ``measure`` (and ``during``, the sampled lower bound);
- meta-solver and writing: the algorithm's ``meta`` and the run writer's ``save``.

Two more lines cut across the parts: the *game engine* is the time spent inside pyspiel's own
methods (``apply_action``, ``legal_actions``, tensors, ``clone``...: the calls' own time), and
*torch* the time inside torch's C++ functions. The raw playout rate is
``games.simulation.random_playout_rate``: uniform-random pyspiel playouts with nothing else,
the rate no rollout engine in Python exceeds.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

import psro
from games.loading import load
from games.simulation import random_playout_rate
from psro.cli.common import options

PARTS = (
    ("rollouts", "psro/rl/response_training.py", "collect"),
    ("PPO updates", "psro/rl/ppo.py", "_ppo_update"),
    ("tabularisation", "psro/extensive_form/policies.py", "tabularise"),
    ("payoff entries", "psro/evaluation/", "extend"),
    ("exploitability", "psro/evaluation/", "measure"),
    ("lower bound", "psro/evaluation/", "during"),
    ("meta-solver", "psro/algorithms/", "meta"),
    ("writing", "psro/storage/checkpoint/writer.py", "save"),
)


def _cumulative(stats: pstats.Stats, where: str, name: str) -> float:
    return sum(ct for (file, _, func), (_, _, _, ct, _) in stats.stats.items()
               if func == name and where in file.replace("\\", "/"))


def _own(stats: pstats.Stats, marker: str) -> float:
    """Own time of built-in functions whose name contains ``marker``."""
    return sum(tt for (file, _, func), (_, _, tt, _, _) in stats.stats.items()
               if file == "~" and marker in func)


def profile(game: str, iterations: int, ppo: dict, seed: int, monte_carlo: dict) -> dict:
    """Profile ``iterations`` PPO iterations of ``psro`` (Nash) on ``game``; parts in seconds."""
    with tempfile.TemporaryDirectory() as out:
        extra = {"monte_carlo": monte_carlo} if monte_carlo else {}
        run = psro.PSRO(game, "ppo", ppo=ppo, seed=seed, out=Path(out) / "run", **extra)
        run.step()  # iteration 0: uniform members, not profiled
        run.step()  # iteration 1, not profiled: its first PPO run imports torch's optimiser
        # machinery (torch._dynamo, about 3 s, once per process)
        steps_before = run.state.env_steps
        profiler = cProfile.Profile()
        start = time.perf_counter()
        profiler.enable()
        for _ in range(iterations):
            run.step()
        profiler.disable()
        total = time.perf_counter() - start
        steps = run.state.env_steps - steps_before
        run.backend.close()
        run.writer.release()
    stats = pstats.Stats(profiler)
    parts = {label: _cumulative(stats, where, name) for label, where, name in PARTS}
    engine = _own(stats, "pyspiel")
    torch_s = _own(stats, "torch")  # the backward pass is torch._C._EngineBase.run_backward
    return {"total": total, "parts": parts, "engine": engine, "torch": torch_s,
            "env_steps": steps, "collect_rate": steps / max(parts["rollouts"], 1e-9)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", action="append", help="game string (repeatable)")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--ppo", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--monte-carlo", action="append", default=[], metavar="KEY=VALUE",
                        help="Monte Carlo payoff options (games too large to walk)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ppo = options(args.ppo, "--ppo")
    for game in args.game or ["leduc_poker"]:
        raw = random_playout_rate(load(game).pyspiel_game, seconds=3.0)
        result = profile(game, args.iterations, ppo, args.seed,
                         options(args.monte_carlo, "--monte-carlo"))
        total = result["total"]
        print(f"\n{game}: {args.iterations} iterations in {total:.1f} s, "
              f"{result['env_steps']:,} env steps")
        print("| part | seconds | share of the iterations |")
        print("| --- | --- | --- |")
        accounted = 0.0
        for label, seconds in result["parts"].items():
            if seconds > 0:
                print(f"| {label} | {seconds:.2f} | {seconds / total:.1%} |")
            if label != "tabularisation":  # tabularise runs inside the oracle, not a rollout
                accounted += seconds
        accounted += result["parts"]["tabularisation"]
        print(f"| other (the loop, the oracle's bookkeeping) | {max(total - accounted, 0):.2f} "
              f"| {max(total - accounted, 0) / total:.1%} |")
        print(f"| *game engine (pyspiel's own methods, all parts)* | {result['engine']:.2f} | "
              f"{result['engine'] / total:.1%} |")
        print(f"| *torch's C++ functions, all parts* | {result['torch']:.2f} | "
              f"{result['torch'] / total:.1%} |")
        print(f"rollout env steps/s {result['collect_rate']:,.0f}; raw pyspiel random playouts "
              f"{raw:,.0f} steps/s in this process ({result['collect_rate'] / raw:.2f}x)")


if __name__ == "__main__":
    main()
