"""Benchmark: the CFR family's two engines side by side in one process, the numpy passes
(:mod:`psro.extensive_form.sequence_passes`, which games of more than two players run) and the
compiled kernel on the restricted game's compact part (:mod:`psro.extensive_form.compiled_cfr`,
which two-player games run): milliseconds an iteration and the largest difference between
their average policies, on the whole game and on the restricted games of one ``xdo`` run.

Run: ``python experiments/bench_cfr_engines.py [--games leduc_poker liars_dice ...]
[--variants cfr+ dcfr pcfr+] [--iterations 200]``. The whole game runs ``--iterations``
iterations of each variant from scratch with each engine; then ``xdo --xdo-solver cfr`` runs to
exploitability 1e-3, and each of its restricted games is solved from scratch by CFR+ for
``--iterations`` iterations with each engine (its share of the game's leaves, the part the
compiled engine walks, is printed beside), after a line that splits that run's clock into its
restricted solves and the rest (best responses, exact exploitability, payoff entries, the run
directory). Beside the times, each engine's average profile's
NashConv in the restricted game: the two agree to rounding, or nearly where the game has ties
(a regret that is 0 in exact arithmetic and 1e-19 in floating point turns a regret-matching+
policy from uniform to pure at an information set whose actions are worth the same, so the
averages can differ there while the NashConv does not).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import psro  # noqa: E402
from psro.algorithms.xdo import EQUILIBRIUM  # noqa: E402
from psro.extensive_form.compiled_cfr import load_kernels  # noqa: E402
from psro.extensive_form.reached import live  # noqa: E402
from psro.extensive_form.restricted_cfr import RestrictedCFR, restricted_nash_conv  # noqa: E402
from psro.extensive_form.sequence_form import SequenceFormGame  # noqa: E402

GAMES = ("leduc_poker", "liars_dice",
         "goofspiel(num_cards=6,imp_info=True,points_order=descending)")


def timed(tree: SequenceFormGame, allowed: list[np.ndarray], variant: str, iterations: int,
          compiled: bool) -> tuple[float, float]:
    """Milliseconds an iteration of ``iterations`` from scratch, and the restricted NashConv of
    the average profile."""
    solver = RestrictedCFR(tree, warm=False, variant=variant, compiled=compiled)
    solver.replay(allowed, 0)
    start = time.perf_counter()
    solver.replay(allowed, iterations)
    seconds = time.perf_counter() - start
    return 1e3 * seconds / iterations, restricted_nash_conv(tree, solver.average(allowed),
                                                            allowed)


def row(label: str, tree: SequenceFormGame, allowed: list[np.ndarray], variant: str,
        iterations: int) -> tuple[float, float]:
    slow, first = timed(tree, allowed, variant, iterations, compiled=False)
    fast, second = timed(tree, allowed, variant, iterations, compiled=True)
    print(f"| {label} | {slow:.3g} | {fast:.3g} | {slow / fast:.1f} | {first:.6g} / "
          f"{second:.6g} |", flush=True)
    return slow, fast


def timing(algorithm) -> list[float]:
    """Time ``algorithm``'s restricted solves (its ``expand``): the returned one-item list
    holds their seconds so far."""
    spent, expand = [0.0], algorithm.expand

    def timed(state):
        start = time.perf_counter()
        try:
            return expand(state)
        finally:
            spent[0] += time.perf_counter() - start

    algorithm.expand = timed
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES), metavar="GAME")
    parser.add_argument("--variants", nargs="+", default=["cfr+", "dcfr", "pcfr+"])
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    print(f"kernels loaded in {load_kernels():.2f} s")
    print("| game, restricted game | numpy ms/iteration | compiled ms/iteration | ratio | "
          "restricted NashConv, numpy / compiled |")
    print("| --- | --- | --- | --- | --- |")
    for game in args.games:
        tree = psro.game_tree(game)
        legal = [tree.uniform_policy(p) > 0 for p in range(2)]
        for variant in args.variants:
            row(f"{game}, whole game, {variant}", tree, legal, variant, args.iterations)
        run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver="cfr", seed=0)
        algorithm = run.parts.algorithm
        solving = timing(algorithm)
        rows = run.run(target_exploitability=1e-3, time_budget_s=600)
        clock, last = rows[-1]["wall_time_s"], rows[-1]["iteration"]
        print(f"| {game}, `xdo, cfr` to 1e-3 in {last} iterations: run clock {clock:.3g} s, "
              f"its restricted solves {solving[0]:.3g} s, the rest {clock - solving[0]:.3g} s "
              f"({(clock - solving[0]) / last:.3g} s an iteration) | | | | |", flush=True)
        solved = [m for m in run.population[0] if m.metadata.get("oracle") == EQUILIBRIUM]
        slow = fast = 0.0
        for member in solved:
            k = member.metadata["iteration"]
            allowed = [algorithm.allowed(p, [m for m in pop
                                             if m.metadata.get("iteration", 0) <= k])
                       for p, pop in enumerate(run.population)]
            share = float(live(tree, allowed).leaves.mean())
            a, b = row(f"{game}, xdo iteration {k} ({share:.1%} of the leaves), cfr+", tree,
                       allowed, "cfr+", args.iterations)
            slow, fast = slow + a, fast + b
        print(f"| {game}, xdo's {len(solved)} restricted games in all | {slow:.3g} | "
              f"{fast:.3g} | {slow / fast:.1f} | |", flush=True)


if __name__ == "__main__":
    main()
