"""Reference lines of the walkable tier, measured on the machine that runs the suite: OpenSpiel's
C++ CFR+ (its average policy's exploitability against wall time), the toolkit's tabular solvers
of the whole game (:data:`TREE_REFERENCES`: predictive CFR+, discounted CFR, discounted CFR+,
linear CFR and, on two-player zero-sum games, the sequence-form LP by simplex and by interior
point; each until the smallest threshold or the budget, its clock without its measurements or
the walk of the tree, as the suite's methods' clocks leave the walk out) and the uniform
policy.

Exploitability is NashConv divided by the number of players, as everywhere in the toolkit
(for two-player zero-sum games, OpenSpiel's ``exploitability``). CFR+'s clock counts only its
own iterations, not the measurements of its average policy (which favours CFR+); the policy is
measured at geometrically spaced iterations and, around each threshold's crossing, after every
iteration, so the time to a threshold is CFR+'s own. In games with
more than two players or not zero-sum, CFR+ has no equilibrium guarantee and its line is what
its average policy reaches. Simultaneous-move games are solved in OpenSpiel's turn-based form
(the same equilibria).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pyspiel

import games
from games.simulation import turn_based
from psro.storage.files import atomic_write_text
from psro.storage.provenance import provenance
from psro.storage.text_files import read_json

GROWTH = 1.3
"""CFR+'s average policy is measured after iterations 1, 2, ... growing by this factor (and
after every iteration where a threshold is crossed between two of them)."""
VERSION = 5
"""Bumped when the measurement changes, so an old reference file is measured again (3: the
tabular solvers' lines; 4: the LP by interior point; 5: DCFR+)."""
TREE_REFERENCES = {"pcfr+": "PCFR+ (tabular)", "dcfr": "DCFR (tabular)",
                   "dcfr+": "DCFR+ (tabular)",
                   "lcfr": "linear CFR (tabular)", "lp": "sequence-form LP",
                   "lp_ipm": "sequence-form LP (interior point)"}
"""The toolkit's tabular solvers measured as reference lines, with their labels."""


def exploitability(spec: str, game: pyspiel.Game, policy) -> float:
    """NashConv of an OpenSpiel policy of ``game`` (the game ``spec``, turn-based) over the
    number of players: by the toolkit's sequence form where ``game`` is ``spec`` itself, a
    sequential game (the same numbers as OpenSpiel's ``nash_conv``, 30 times faster on liar's
    dice), by OpenSpiel's where it was made turn-based."""
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL and \
            game.get_type().short_name != "turn_based_simultaneous_game":
        from psro.evaluation.exploitability import exploitability as toolkit_exploitability

        return float(toolkit_exploitability(spec, policy).exploitability)
    return float(pyspiel.nash_conv(game, policy)) / game.num_players()


def uniform_exploitability(spec: str) -> float:
    """Exploitability of the uniform random policy of the game ``spec``."""
    game = turn_based(games.load(spec).pyspiel_game)
    return exploitability(spec, game, pyspiel.UniformRandomPolicy(game))


def cfr_plus_curve(spec: str, time_budget_s: float, floor: float = 0.0,
                   thresholds: tuple[float, ...] = ()) -> list[dict]:
    """CFR+ on the game ``spec`` for ``time_budget_s`` seconds of its own iterations (or until
    its exploitability is at or below ``floor``): rows ``{iteration, wall_time_s,
    exploitability}`` at geometrically spaced iterations and at the end, and, for each of
    ``thresholds`` crossed between two of them, at the first iteration at or below it (found
    by :func:`_exact_crossings`: the curve's first row at or below a threshold is CFR+'s own
    crossing, not up to ``GROWTH`` times later)."""
    game = turn_based(games.load(spec).pyspiel_game)
    solver = pyspiel.CFRPlusSolver(game)
    rows, clock, iteration, due = [], 0.0, 0, 1
    while True:
        start = time.perf_counter()
        solver.evaluate_and_update_policy()
        clock += time.perf_counter() - start
        iteration += 1
        last = clock >= time_budget_s
        if iteration >= due or last:
            value = exploitability(spec, game, solver.average_policy())
            rows.append({"iteration": iteration, "wall_time_s": clock,
                         "exploitability": value})
            due = max(iteration + 1, math.ceil(iteration * GROWTH))
            if last or value <= floor:
                return _exact_crossings(spec, game, rows, thresholds)


def _exact_crossings(spec: str, game: pyspiel.Game, rows: list[dict],
                     thresholds: tuple[float, ...]) -> list[dict]:
    """``rows`` with, for each threshold first reached at a row more than one iteration after
    the row before it, a row at the first iteration in between at or below it: CFR+ (which is
    deterministic) is run again from scratch, measured after every iteration of those gaps.
    Its clock there is the first run's at the row before the gap plus the second run's own
    time since that iteration (at most the first run's at the gap's end)."""
    gaps = {}
    for threshold in thresholds:
        k = next((i for i, r in enumerate(rows) if r["exploitability"] <= threshold), None)
        if k is not None and k > 0 and rows[k]["iteration"] > rows[k - 1]["iteration"] + 1:
            gaps[threshold] = (rows[k - 1], rows[k])
    if not gaps:
        return rows
    solver, clock, since, found = pyspiel.CFRPlusSolver(game), 0.0, {}, []
    for iteration in range(1, max(high["iteration"] for _, high in gaps.values())):
        start = time.perf_counter()
        solver.evaluate_and_update_policy()
        clock += time.perf_counter() - start
        value = None
        for threshold, (low, high) in list(gaps.items()):
            if iteration == low["iteration"]:
                since[threshold] = clock
            elif low["iteration"] < iteration < high["iteration"]:
                if value is None:
                    value = exploitability(spec, game, solver.average_policy())
                if value <= threshold:
                    found.append({"iteration": iteration, "exploitability": value,
                                  "wall_time_s": min(high["wall_time_s"], low["wall_time_s"]
                                                     + clock - since[threshold])})
                    del gaps[threshold]
        if not gaps:
            break
    by_iteration = {r["iteration"]: r for r in found}
    by_iteration.update((r["iteration"], r) for r in rows)
    return [by_iteration[k] for k in sorted(by_iteration)]


def reference(folder: Path, spec: str, time_budget_s: float,
              thresholds: tuple[float, ...] = ()) -> dict:
    """The reference lines of ``spec`` for a budget (CFR+'s crossing of each of
    ``thresholds`` measured exactly), read from ``folder/reference.json`` where they were
    measured already for that budget and those thresholds, else measured now and written
    there: ``{"game", "time_budget_s", "thresholds", "uniform", "cfr_plus": rows,
    "tree_solvers": {solver: rows}, "provenance"}``."""
    path = folder / "reference.json"
    if path.exists():
        try:
            saved = read_json(path)
        except ValueError:
            saved = None
        if isinstance(saved, dict) and saved.get("version") == VERSION and \
                saved.get("game") == spec and saved.get("time_budget_s") == time_budget_s \
                and saved.get("thresholds") == list(thresholds):
            return saved
    made = {"version": VERSION, "game": spec, "time_budget_s": time_budget_s,
            "thresholds": list(thresholds), "uniform": uniform_exploitability(spec),
            "cfr_plus": cfr_plus_curve(spec, time_budget_s, thresholds=tuple(thresholds)),
            "tree_solvers": tree_solver_curves(spec, time_budget_s, tuple(thresholds)),
            "provenance": provenance()}
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(made, indent=1))
    return made


def tree_solver_curves(spec: str, time_budget_s: float,
                       thresholds: tuple[float, ...]) -> dict[str, list[dict]]:
    """Each of :data:`TREE_REFERENCES` on the walked game ``spec`` (the LP on two-player
    zero-sum games only), for ``time_budget_s`` solver seconds or until the smallest of
    ``thresholds`` (1e-3 without any): rows ``{iteration, wall_time_s, exploitability}``
    (:func:`psro.extensive_form.tree_solvers.solve_tree`)."""
    from psro.evaluation.exploitability import game_tree
    from psro.extensive_form.tree_solvers import LP_SOLVERS, lp_applies, solve_tree

    tree = game_tree(spec)
    curves = {}
    for solver in TREE_REFERENCES:
        if solver in LP_SOLVERS and not lp_applies(tree):
            continue
        result = solve_tree(tree, solver, thresholds or (1e-3,), time_budget_s)
        curves[solver] = [{"iteration": r["iterations"], "wall_time_s": r["seconds"],
                           "exploitability": r["exploitability"]} for r in result.curve]
    return curves
