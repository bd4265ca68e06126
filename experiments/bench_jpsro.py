"""Benchmark: ``--algorithm jpsro`` against OpenSpiel's JPSRO, side by side in one process.

Run: ``python experiments/bench_jpsro.py [--games "kuhn_poker(players=3)",sheriff]
[--iterations 20] [--openspiel-iterations 8] [--budget 600]``. Needs the ``bench`` extra
(OpenSpiel's ``jpsro`` imports cvxpy).

For each game it runs this toolkit's JPSRO with the exact oracle and three meta-solvers
(``cce``: maximum-entropy CCE, the default; ``cce`` with ``objective = "gini"``; ``ce`` with
``objective = "gini"``) for ``--iterations`` iterations (or ``--budget`` seconds), and
OpenSpiel's ``jpsro.run_loop`` with the matching maximum-Gini solvers (``mgcce`` with CCE best
responses, ``mgce`` with CE ones; its default ``br_selection="largest_gap"``) for
``--openspiel-iterations``. It prints the gap (largest gain of a player deviating from the
joint distribution, exact in both) per iteration side by side, the first iteration at or below
1e-3, and the mean seconds per iteration over the iterations both ran, with their ratio.

OpenSpiel's iteration ``i`` reports the gap of the distribution over populations of ``i``
members each, which is this toolkit's iteration ``i - 1``; its time per iteration includes
its evaluation meta-solver (set to the training one here) and the gap it computes for it.

Targets (issue 11): a gap at or below 1e-3 within 20 iterations on three-player Kuhn poker,
and at least 10x less time per iteration than OpenSpiel's.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import psro  # noqa: E402

OURS = {"cce": ("cce", {}), "cce-gini": ("cce", {"objective": "gini"}),
        "ce-gini": ("ce", {"objective": "gini"})}
"""Label -> (meta-solver, options) of this toolkit's runs."""
OPENSPIEL = {"cce-gini": ("cce", "mgcce"), "ce-gini": ("ce", "mgce")}
"""Label -> (best responses, meta-solver) of OpenSpiel's runs, matching ours by label."""


def ours(game: str, solver: str, options: dict, iterations: int,
         budget: float) -> list[tuple[float, float]]:
    """(gap, cumulative seconds) per iteration, iteration 0 first."""
    rows = psro.PSRO(game, algorithm="jpsro", meta_solver=solver,
                     meta_solver_options=options).run(iterations=iterations,
                                                      time_budget_s=budget)
    return [(r["gap"], r["wall_time_s"]) for r in rows]


def openspiel(game_name: str, target: str, solver: str, iterations: int,
              budget: float) -> list[tuple[float, float]]:
    """(gap, cumulative seconds) per iteration of OpenSpiel's JPSRO, aligned with ours (its
    iteration i + 1 reports the gap of our iteration i); stops early past ``budget``."""
    import logging

    import pyspiel
    from absl import logging as absl_logging
    from open_spiel.python.algorithms import jpsro

    absl_logging.set_verbosity(absl_logging.ERROR)
    logging.getLogger("cvxpy").setLevel(logging.ERROR)
    game = pyspiel.load_game(game_name)
    out: list[tuple[float, float]] = []
    start = time.perf_counter()

    class Budget(Exception):
        pass

    def callback(iteration, per_player_repeats, per_player_policies, joint_policies,
                 joint_returns, meta_games, train_meta_dists, eval_meta_dists,
                 train_meta_values, eval_meta_values, train_meta_gaps, eval_meta_gaps,
                 kwargs, checkpoint):
        out.append((float(max(train_meta_gaps[-1])), time.perf_counter() - start))
        if time.perf_counter() - start > budget:
            raise Budget
        return checkpoint

    try:
        jpsro.run_loop(game, game_name, iterations=iterations - 1, target_equilibrium=target,
                       train_meta_solver=solver, eval_meta_solver=solver, callback=callback)
    except Budget:
        pass
    return out


def first_below(curve: list[tuple[float, float]], threshold: float = 1e-3) -> str:
    hit = next((i for i, (gap, _) in enumerate(curve) if gap <= threshold), None)
    return "not reached" if hit is None else f"iteration {hit} ({curve[hit][1]:.1f} s)"


def per_iteration(curve: list[tuple[float, float]], count: int) -> float:
    """Mean seconds per iteration over the first ``count`` iterations after iteration 0."""
    count = min(count, len(curve) - 1)
    return (curve[count][1] - curve[0][1]) / count if count > 0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="kuhn_poker(players=3),sheriff")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--openspiel-iterations", type=int, default=8)
    parser.add_argument("--budget", type=float, default=600.0,
                        help="seconds per run at most (each run stops after the iteration "
                             "that passes it)")
    args = parser.parse_args()
    for game in args.games.split(","):
        curves = {label: ours(game, solver, options, args.iterations, args.budget)
                  for label, (solver, options) in OURS.items()}
        theirs = {label: openspiel(game, target, solver, args.openspiel_iterations,
                                   args.budget)
                  for label, (target, solver) in OPENSPIEL.items()}
        print(f"\n{game}: gap per iteration (exact oracle; OpenSpiel columns: its jpsro)")
        labels = [*OURS, *(f"openspiel {k}" for k in OPENSPIEL)]
        columns = [*curves.values(), *theirs.values()]
        print("iteration  " + "".join(f"{label:>20}" for label in labels))
        for i in range(max(len(c) for c in columns)):
            cells = "".join(f"{c[i][0]:>20.2e}" if i < len(c) else f"{'':>20}"
                            for c in columns)
            print(f"{i:>9}  {cells}")
        print("first gap <= 1e-3:")
        for label, curve in zip(labels, columns, strict=True):
            print(f"  {label:<20} {first_below(curve)}")
        for label in OPENSPIEL:
            count = len(theirs[label]) - 1
            mine, other = per_iteration(curves[label], count), \
                per_iteration(theirs[label], count)
            print(f"seconds per iteration over iterations 1-{count}, {label}: "
                  f"ours {mine:.3f}, OpenSpiel {other:.3f} "
                  f"({other / mine if mine > 0 else np.inf:.0f}x)")


if __name__ == "__main__":
    main()
