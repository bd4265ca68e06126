"""The cost of one regret-matching round of anytime PSRO at a given population size, side by
side in one process: every member's return against one trained network estimated to the run's
Monte Carlo tolerance (anytime's default) and from exactly ``--episodes`` episodes
(``anytime_episodes``).

    python experiments/bench_anytime_rounds.py runs/bench-large-10m/phantom-ttt/psro/seed-0 \\
        --members 35 --episodes 128

The run directory is any finished PPO run of a two-player game: its first ``--members`` members
of player 0 play against player 1's newest network (as in a round while player 1 trains), each
estimate seeded by its member. Prints, per setting, a round's time, its episodes and its
episodes a second, and the ratio of the two rounds' times (each timed ``--repeats`` times,
median).
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

from psro.algorithms.anytime import round_options
from psro.bench.evaluation import play_game
from psro.evaluation import monte_carlo
from psro.evaluation.exploitability import game_tree
from psro.storage import checkpoint


def one_round(game, members: list, network, options: dict) -> tuple[float, int]:
    """Seconds and episodes of one round: every member against ``network``."""
    start, episodes = time.perf_counter(), 0
    for k, member in enumerate(members):
        episodes += monte_carlo.estimate_profile(game, [member, network], 1000 + k,
                                                 **options).count
    return time.perf_counter() - start, episodes


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished PPO run directory (two players)")
    parser.add_argument("--members", type=int, default=35)
    parser.add_argument("--episodes", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    saved = checkpoint.load(args.run)
    game = play_game(saved.config.game)
    chosen = [*saved.state.populations[0][:args.members], saved.state.populations[1][-1]]
    tree = game_tree(saved.config.game) if any(m.kind == "tabular" for m in chosen) else None
    *members, network = [m.actor(tree) for m in chosen]  # tables look their sets up in the tree
    tolerance = round_options(replace(saved.config, anytime_episodes=None))
    fixed = round_options(replace(saved.config, anytime_episodes=args.episodes))
    medians = {}
    print(f"{saved.config.game}: {len(members)} members of player 0 against player 1's newest")
    for name, options in (("to the tolerance", tolerance), (f"{args.episodes} episodes", fixed)):
        timed = [one_round(game, members, network, options) for _ in range(args.repeats)]
        seconds = statistics.median(t for t, _ in timed)
        medians[name] = seconds
        print(f"  {name:>18}: {seconds:.2f} s a round, {timed[0][1]:,} episodes, "
              f"{timed[0][1] / seconds:,.0f} episodes/s")
    slow, fast = medians.values()
    print(f"  ratio: {slow / fast:.1f}x")


if __name__ == "__main__":
    main()
