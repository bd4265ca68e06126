"""The GRPO oracle beside the PPO oracle at equal env steps, read from a suite folder.

    psro bench experiments/suites/grpo_vs_ppo.toml --out runs/bench-grpo --jobs 2
    python experiments/bench_grpo.py runs/bench-grpo

For every game and method of the folder (methods labelled "ALGORITHM, ORACLE"): the final
exploitability over the seeds (exact: on the walked tree, or the suite's measurement by a
compiled kernel on the large tier) (mean and 95% Student-t half-width), its env steps, the
oracle's training throughput (env steps per second of its best responses' own clocks, from
``oracle_log.jsonl``) and the run's wall time; then, per algorithm, GRPO minus PPO paired by
seed (the same seed gives both runs the same seeds of everything else).

    python experiments/bench_grpo.py --response-gap leduc_poker liars_dice

instead trains one best response of each oracle (default options, 60,000 env steps) against
each of three fixed random policies of player 1 and prints how far its greedy member's value
falls short of the exact best response's, and the seconds each took, side by side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
from scipy import stats


def _mean_interval(values: list[float]) -> str:
    values = np.asarray(values, float)
    if len(values) < 2:
        return f"{values.mean():.4f}"
    half = stats.t.ppf(0.975, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
    return f"{values.mean():.4f} +- {half:.4f}"


def _run(directory: Path) -> dict:
    import psro

    last = psro.load_run(directory).metrics[-1]
    shared = directory.with_name(f"{directory.name}.bound.json")  # large tier: the suite's
    if shared.exists():
        last = {**last, "exploitability": json.loads(shared.read_text())["exploitability"]}
    steps = seconds = 0.0
    responses: dict[tuple, dict] = {}
    log = directory / "oracle_log.jsonl"
    for line in log.read_text().splitlines() if log.exists() else ():
        row = json.loads(line)
        if row.get("purpose", "oracle") == "oracle" and "wall_s" in row:
            responses[(row["iteration"], row["player"], row.get("target"))] = row
    for row in responses.values():  # the last update of each best response
        steps += row["env_steps"]
        seconds += row["wall_s"]
    return {"exploitability": float(last["exploitability"]), "env_steps": int(last["env_steps"]),
            "wall_s": float(last["wall_time_s"]),
            "steps_per_s": steps / seconds if seconds else float("nan")}


def response_gaps(spec: str, policies: int = 3, env_steps: int = 60_000) -> None:
    """Print, per fixed random policy of player 1, each oracle's gap to the exact best
    response of player 0 and its training seconds."""
    import time

    import pyspiel

    from psro.evaluation.exploitability import game_tree
    from psro.extensive_form.policies import TabularPolicy, tabularise
    from psro.rl.config import GRPOOptions, PPOConfig, Training
    from psro.rl.grpo import train_grpo
    from psro.rl.ppo import train

    game, tree = pyspiel.load_game(spec), game_tree(spec)
    legal = tree.uniform_policy(1) > 0
    for seed in range(policies):
        weights = np.random.default_rng(seed).uniform(0.1, 1, legal.shape) * legal
        opponent = TabularPolicy(1, weights / weights.sum(axis=1, keepdims=True))
        plan = opponent.realization_plan(tree)
        _, best = tree.best_response(0, [None, plan])
        shown = []
        for name, trainer in (("ppo", train), ("grpo", lambda t: train_grpo(t, GRPOOptions()))):
            training = Training(game, 0, [None, [opponent.actor(tree)]], [None, np.ones(1)],
                                PPOConfig(env_steps=env_steps), seed=seed)
            start = time.perf_counter()
            network, _ = trainer(training)
            seconds = time.perf_counter() - start
            value = tree.expected_returns([tabularise(tree, network, 0).realization_plan(tree),
                                           plan])[0]
            shown.append(f"{name} gap {best - value:.4f} in {seconds:.1f} s")
        print(f"{spec}, policy {seed}: " + ", ".join(shown), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, nargs="?", help="the suite folder (psro bench --out)")
    parser.add_argument("--response-gap", nargs="+", metavar="GAME",
                        help="instead: each oracle's gap to the exact best response against "
                             "fixed random policies of these walkable games")
    args = parser.parse_args(argv)
    if args.response_gap:
        for spec in args.response_gap:
            response_gaps(spec)
        return 0
    if args.folder is None:
        parser.error("give the suite folder, or --response-gap GAME")
    found: dict[str, dict[str, dict[int, dict]]] = {}
    for done in sorted(args.folder.glob("*/*/seed-*.done.json")):
        game, method = done.parent.parent.name, done.parent.name
        seed = int(done.name.split(".")[0].removeprefix("seed-"))
        found.setdefault(game, {}).setdefault(method, {})[seed] = _run(done.with_suffix("")
                                                                       .with_suffix(""))
    if not found:
        print(f"{args.folder}: no finished runs", file=sys.stderr)
        return 2
    print("| game | method | seeds | exploitability at the end | env steps | oracle env steps/s "
          "| run wall s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for game, methods in found.items():
        for method, seeds in methods.items():
            runs = list(seeds.values())
            print(f"| {game} | {method} | {len(runs)} | "
                  f"{_mean_interval([r['exploitability'] for r in runs])} | "
                  f"{int(np.mean([r['env_steps'] for r in runs])):,} | "
                  f"{np.mean([r['steps_per_s'] for r in runs]):,.0f} | "
                  f"{np.mean([r['wall_s'] for r in runs]):.0f} |")
    print("\nGRPO minus PPO, paired by seed (negative: GRPO less exploitable):\n")
    print("| game | algorithm | seeds | difference | per seed |")
    print("| --- | --- | --- | --- | --- |")
    for game, methods in found.items():
        for method in methods:
            algorithm, _, oracle = method.rpartition("-")
            if oracle != "grpo" or f"{algorithm}-ppo" not in methods:
                continue
            ppo, grpo = methods[f"{algorithm}-ppo"], methods[method]
            seeds = sorted(set(ppo) & set(grpo))
            gaps = [grpo[s]["exploitability"] - ppo[s]["exploitability"] for s in seeds]
            if seeds:
                print(f"| {game} | {algorithm} | {len(seeds)} | {_mean_interval(gaps)} | "
                      f"{', '.join(f'{g:+.3f}' for g in gaps)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
