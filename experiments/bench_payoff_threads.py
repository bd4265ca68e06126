"""Benchmark: Monte Carlo payoff entries with networks on one torch thread, against the same
entries with torch's default thread count, side by side in one process.

Run: ``python experiments/bench_payoff_threads.py [--game SPEC] [--members 6] [--episodes 192]
[--workers 2] [--repeats 3]``. Builds ``--members`` networks per player for the game
(randomly initialised, the oracle's default 128x128 actor-critic: a forward pass costs the
same whatever the weights), then estimates every profile's payoffs (``members ** 2`` entries
of ``--episodes`` episodes each, the first pass of a PSRO payoff table) on the processes
backend, alternating two ways ``--repeats`` times: each task at torch's default intra-op
thread count (what simulation did before: one thread per core in every worker) and each task
inside :func:`psro.rl.networks.one_thread` (what :func:`psro.evaluation.monte_carlo.simulate`
does now). Prints the median time of each way, their ratio, and whether the two gave the same
estimates bit for bit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from games.simulation import VectorGame  # noqa: E402
from psro.backends import Task, make_backend  # noqa: E402
from psro.bench.evaluation import play_game  # noqa: E402
from psro.evaluation import monte_carlo  # noqa: E402
from psro.rl.networks import ActorCritic, NeuralPolicy  # noqa: E402


def entry_default_threads(game, actors, seed: int, episodes: int):
    """One entry's episodes at torch's default thread count (the worker's cores)."""
    torch.set_num_threads(os.cpu_count() or 1)
    return monte_carlo._simulate(game, [[a] for a in actors], [np.ones(1)] * len(actors),
                                 episodes, seed, 256)


def entry_one_thread(game, actors, seed: int, episodes: int):
    """One entry's episodes as :func:`monte_carlo.simulate` runs them (one torch thread)."""
    return monte_carlo.simulate(game, [[a] for a in actors], [np.ones(1)] * len(actors),
                                episodes, seed)


def members(game, count: int) -> list[list[NeuralPolicy]]:
    vg = VectorGame(game, 1, seed=0)
    made = []
    for p in range(game.num_players()):
        torch.manual_seed(p)
        made.append([NeuralPolicy(p, ActorCritic(vg.obs_size, game.num_distinct_actions()),
                                  {"greedy": False}, f"p{p}m{k}") for k in range(count)])
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="phantom_ttt(obstype=reveal-nothing)")
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--episodes", type=int, default=192)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    game = play_game(args.game)
    pops = members(game, args.members)
    profiles = [(i, j) for i in range(args.members) for j in range(args.members)]
    backend = make_backend("processes", args.workers, None)
    backend.start([])
    times: dict[str, list[float]] = {"default threads": [], "one thread": []}
    results = {}
    try:
        for _ in range(args.repeats):
            for name, fn in (("default threads", entry_default_threads),
                             ("one thread", entry_one_thread)):
                tasks = [Task(fn, (game, [pops[0][i], pops[1][j]], 1000 + k, args.episodes))
                         for k, (i, j) in enumerate(profiles)]
                start = time.perf_counter()
                results[name] = backend.run(tasks)
                times[name].append(time.perf_counter() - start)
    finally:
        backend.close()
    print(f"{args.game}: {len(profiles)} entries of {args.episodes} episodes, processes backend "
          f"with {args.workers} workers, {os.cpu_count()} cores, median of {args.repeats}")
    medians = {name: statistics.median(t) for name, t in times.items()}
    for name, value in medians.items():
        print(f"  {name:16s} {value:7.3f} s  ({value / len(profiles) * 1000:.1f} ms an entry)")
    print(f"  default / one thread: {medians['default threads'] / medians['one thread']:.2f}x")
    same = all(all(np.array_equal(a, b) for a, b in zip(x, y, strict=True))
               for x, y in zip(results["default threads"], results["one thread"], strict=True))
    print(f"  same estimates bit for bit: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()
