"""Benchmark: PSRO with the PPO oracle on Kuhn and Leduc poker; rollout speed.

Run: ``python experiments/bench_psro_ppo.py [--quick] [--kuhn-seconds 600]
[--leduc-seconds 3600] [--out runs/bench_ppo] [--backend processes|local]``; ``--quick`` gives
Kuhn 120 s and Leduc 600 s. Prints exploitability (exact, via
tabularisation) against wall time and environment steps, and the rollout engine's environment
steps per second beside plain pyspiel random playouts of the same game (the limit), measured in
this process.

Targets (issue 3), on the 2-core machine: Kuhn exploitability <= 0.05 within 10 minutes;
Leduc <= 0.3 within 60 minutes; rollout steps/s at least 30% of the raw playout rate.
OpenSpiel psro_v2's RL oracle needs JAX, chex, optax and haiku (``pip install -e
".[bench-jax]"``); pass ``--psro-v2`` (or ``--psro-v2-only``) to run it on Kuhn at the same
per-best-response episode budget, in this process.
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
from psro.extensive_form.members import UniformMember  # noqa: E402
from psro.rl.ppo import PPOConfig, train_best_response  # noqa: E402


def rollout_speed(game_name: str) -> None:
    game = pyspiel.load_game(game_name)
    raw = random_playout_rate(game, seconds=3.0)
    config = PPOConfig(env_steps=40_000)
    start = time.perf_counter()
    _, diagnostics = train_best_response(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                                         config, seed=0)
    total = time.perf_counter() - start
    steps = diagnostics[-1]["env_steps"]
    rollout = np.median([d["rollout_steps_per_s"] for d in diagnostics])
    print(f"{game_name}: raw pyspiel random playouts {raw:,.0f} steps/s; PPO rollouts "
          f"{rollout:,.0f} steps/s ({rollout / raw:.0%} of raw); PPO training end to end "
          f"{steps / total:,.0f} steps/s including updates")


def psro_curve(game_name: str, seconds: float, out: str | None, iterations: int,
               backend: str = "processes") -> None:
    run = psro.PSRO(game_name, "ppo", "nash", seed=0, backend=backend,
                    out=None if out is None else os.path.join(out, game_name))
    print(f"\n{game_name}: PSRO, PPO oracle (defaults), nash meta-solver, {backend} backend, "
          f"budget {seconds:.0f} s")
    print(f"{'iter':>5} {'wall s':>8} {'env steps':>11} {'exploitability':>15}")

    targets = [0.3, 0.1, 0.05]

    def show(_, row):
        print(f"{row['iteration']:5d} {row['wall_time_s']:8.1f} {row['env_steps']:11,d} "
              f"{row['exploitability']:15.4f}", flush=True)
        while targets and row["exploitability"] <= targets[0]:  # said at once: a run cut
            print(f"  first at or below {targets.pop(0)}", flush=True)  # short keeps it

    run.callbacks.append(show)
    rows = run.run(iterations=iterations, time_budget_s=seconds)
    for target in (0.3, 0.1, 0.05):
        hit = next((r for r in rows if r["exploitability"] <= target), None)
        where = (f"iteration {hit['iteration']}, {hit['wall_time_s']:.0f} s, "
                 f"{hit['env_steps']:,} env steps") if hit else "not reached"
        print(f"  exploitability <= {target}: {where}")


def _kuhn_episodes_per_br() -> int:
    config = PPOConfig()
    _, diagnostics = train_best_response(pyspiel.load_game("kuhn_poker"), 0,
                                         [None, [UniformMember(1)]], [None, np.ones(1)], config,
                                         seed=0)
    episodes = sum(d["episodes"] for d in diagnostics)
    return int(round(episodes * config.env_steps / diagnostics[-1]["env_steps"]))


def run_psro_v2_rl(game_name: str, episodes_per_br: int, seconds: float) -> list[tuple]:
    """OpenSpiel psro_v2 with its RL oracle (JAX policy gradient, the example script's
    defaults: QPG loss, 4 x 256 hidden, entropy 0.001) at ``episodes_per_br`` training episodes
    per best response, Nash meta-solver, sims_per_entry 1000; stops after ``seconds``.
    Returns (iteration, exploitability, seconds excluding measurement) rows."""
    import contextlib
    import io

    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import exploitability, policy_aggregator
    from open_spiel.python.algorithms.psro_v2 import psro_v2, rl_oracle, rl_policy

    np.random.seed(0)
    env = rl_environment.Environment(pyspiel.load_game(game_name))
    kwargs = {"info_state_size": env.observation_spec()["info_state"][0],
              "num_actions": env.action_spec()["num_actions"], "loss_str": "qpg",
              "loss_class": False, "hidden_layers_sizes": [256] * 4, "entropy_cost": 0.001,
              "critic_learning_rate": 1e-2, "pi_learning_rate": 1e-3,
              "num_critic_before_pi": 8, "optimizer_str": "sgd"}
    start = time.perf_counter()
    measure = 0.0
    rows = []
    with contextlib.redirect_stdout(io.StringIO()):
        oracle = rl_oracle.RLOracle(env, rl_policy.PGPolicy, kwargs,
                                    number_training_episodes=episodes_per_br,
                                    self_play_proportion=0.0, sigma=0.0)
        agents = [rl_policy.PGPolicy(env, p, **kwargs) for p in range(env.num_players)]
        for agent in agents:
            agent.freeze()
        solver = psro_v2.PSROSolver(env.game, oracle, initial_policies=agents,
                                    training_strategy_selector="probabilistic", rectifier="",
                                    sims_per_entry=1000, number_policies_selected=1,
                                    meta_strategy_method="nash", sample_from_marginals=True,
                                    symmetric_game=False)
    iteration = 0
    while time.perf_counter() - start - measure < seconds:
        with contextlib.redirect_stdout(io.StringIO()):
            solver.iteration()
        iteration += 1
        t = time.perf_counter()
        aggregated = policy_aggregator.PolicyAggregator(env.game).aggregate(
            range(env.num_players), solver.get_policies(), solver.get_meta_strategies())
        expl = exploitability.nash_conv(env.game, aggregated) / env.num_players
        measure += time.perf_counter() - t
        rows.append((iteration, expl, time.perf_counter() - start - measure))
        print(f"  psro_v2 RL oracle: iteration {iteration:3d}  {rows[-1][2]:7.1f} s  "
              f"exploitability {expl:.4f}", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kuhn-seconds", type=float, default=None, help="default 600")
    parser.add_argument("--leduc-seconds", type=float, default=None, help="default 3600")
    parser.add_argument("--quick", action="store_true",
                        help="Kuhn 120 s and Leduc 600 s (unless given)")
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--out", default=None, help="also write the run directories here")
    parser.add_argument("--skip-leduc", action="store_true")
    parser.add_argument("--skip-kuhn", action="store_true")
    parser.add_argument("--backend", default="processes",
                        help="processes (default: the two players' oracles in parallel) or "
                             "local (one after the other)")
    parser.add_argument("--psro-v2", action="store_true",
                        help="also run psro_v2's RL oracle on Kuhn (needs jax, chex, optax, "
                             "dm-haiku: pip install -e '.[bench-jax]')")
    parser.add_argument("--psro-v2-only", action="store_true",
                        help="only the psro_v2 RL-oracle run")
    args = parser.parse_args()
    if args.kuhn_seconds is None:
        args.kuhn_seconds = 120.0 if args.quick else 600.0
    if args.leduc_seconds is None:
        args.leduc_seconds = 600.0 if args.quick else 3600.0
    if args.psro_v2 or args.psro_v2_only:
        # Same per-best-response budget: our default 60,000 env steps are about this many
        # Kuhn episodes (measured: mean decisions per episode under the PPO learner).
        episodes = _kuhn_episodes_per_br()
        print(f"kuhn_poker: psro_v2 RL oracle, {episodes:,} episodes per best response, "
              f"{args.kuhn_seconds:.0f} s")
        run_psro_v2_rl("kuhn_poker", episodes, args.kuhn_seconds)
        if args.psro_v2_only:
            return
    for name in ("kuhn_poker", "leduc_poker"):
        rollout_speed(name)
    if not args.skip_kuhn:
        psro_curve("kuhn_poker", args.kuhn_seconds, args.out, args.iterations, args.backend)
    if not args.skip_leduc:
        psro_curve("leduc_poker", args.leduc_seconds, args.out, args.iterations, args.backend)


if __name__ == "__main__":
    main()
