"""Benchmark: why ``xdo`` is not ahead of the whole game's tabular solvers on the walkable games,
measured. XDO must solve its last restricted game, which holds most of the full game; this
prints, per game, what that last solve alone costs beside one solve of the whole game.

Run: ``python experiments/bench_xdo_floor.py [--games ...] [--budget 120] [--threshold 1e-3]``.

For each game (2 CPUs, one process):

1. ``xdo`` with the LP, run until its restricted game is complete (an exact equilibrium) or
   ``--budget`` run-clock seconds: its time, iterations, and its last restricted game's share of
   the (information set, action) pairs of the full game;
2. that last restricted game's LP solved alone (a lower bound on any ``xdo, lp`` run's time:
   it solves that LP at its end), beside the whole game's LP;
3. ``xdo`` with CFR+ to ``--threshold``: the CFR+ iterations of all its restricted solves
   together (each costs about one iteration of CFR on the whole game: the restricted game is
   the full tree with actions masked), beside DCFR's and CFR+'s iterations to that threshold on
   the whole game.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402
from psro.algorithms.xdo import EQUILIBRIUM  # noqa: E402
from psro.extensive_form.sequence_lp import SequenceFormLP  # noqa: E402
from psro.extensive_form.tree_solvers import solve_tree  # noqa: E402

GAMES = ("leduc_poker", "liars_dice",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=6,imp_info=True,points_order=descending)",
         "liars_dice(numdice=2,dice_sides=3)")


def lp_floor(game: str, budget: float) -> None:
    """Steps 1 and 2."""
    run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver="lp", seed=0)
    rows = run.run(time_budget_s=budget)
    tree, algorithm = run.tree, run.parts.algorithm
    allowed = [algorithm.allowed(p, pop) for p, pop in enumerate(run.population)]
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    share = sum(int(a.sum()) for a in allowed) / sum(int(a.sum()) for a in legal)
    lp = SequenceFormLP(tree)
    start = time.perf_counter()
    lp.solve(allowed)
    last = time.perf_counter() - start
    start = time.perf_counter()
    lp.solve(legal)
    whole = time.perf_counter() - start
    print(f"| {game} | {rows[-1]['wall_time_s']:.3g} s ({len(rows) - 1}, "
          f"{rows[-1]['exploitability']:.2g}) | {share:.0%} | {last:.3g} s | {whole:.3g} s |",
          flush=True)


def cfr_iterations(game: str, budget: float, threshold: float) -> None:
    """Step 3."""
    run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver="cfr", seed=0)
    rows = run.run(time_budget_s=budget, target_exploitability=threshold)
    solves = [m.metadata["cfr_iterations"] for m in run.population[0]
              if m.metadata.get("oracle") == EQUILIBRIUM]
    reached = rows[-1]["exploitability"] <= threshold
    whole = {solver: solve_tree(run.tree, solver, (threshold,), budget).crossings.get(threshold)
             for solver in ("dcfr", "cfr+")}
    cells = [f"{c['iterations']:,} ({c['seconds']:.3g} s)" if c else "-" for c in whole.values()]
    print(f"| {game} | {sum(solves):,} in {len(solves)} solves ({rows[-1]['wall_time_s']:.3g} s"
          f"{'' if reached else ', not reached'}) | " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES), metavar="GAME")
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--threshold", type=float, default=1e-3)
    args = parser.parse_args()
    print("| game | `xdo, lp`: run clock (iterations, exploitability) | last restricted game, "
          "share of the actions | its LP alone | the whole game's LP |")
    print("| --- | --- | --- | --- | --- |")
    for game in args.games:
        lp_floor(game, args.budget)
    print(f"\n| game | `xdo, cfr` to {args.threshold:g}: CFR+ iterations of its restricted "
          f"solves | DCFR on the whole game | CFR+ on the whole game |")
    print("| --- | --- | --- | --- |")
    for game in args.games:
        cfr_iterations(game, args.budget, args.threshold)


if __name__ == "__main__":
    main()
