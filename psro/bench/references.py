"""Reference lines of the walkable tier, measured on the machine that runs the suite: OpenSpiel's
C++ CFR+ (its average policy's exploitability against wall time) and the uniform policy.

Exploitability is NashConv divided by the number of players, as everywhere in the toolkit
(for two-player zero-sum games, OpenSpiel's ``exploitability``). CFR+'s clock counts only its
own iterations, not the measurements of its average policy (which favours CFR+). In games with
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
"""CFR+'s average policy is measured after iterations 1, 2, ... growing by this factor."""
VERSION = 1
"""Bumped when the measurement changes, so an old reference file is measured again."""


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


def cfr_plus_curve(spec: str, time_budget_s: float,
                   floor: float = 0.0) -> list[dict]:
    """CFR+ on the game ``spec`` for ``time_budget_s`` seconds of its own iterations (or until
    its exploitability is at or below ``floor``): rows ``{iteration, wall_time_s,
    exploitability}`` at geometrically spaced iterations and at the end."""
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
                return rows


def reference(folder: Path, spec: str, time_budget_s: float) -> dict:
    """The reference lines of ``spec`` for a budget, read from ``folder/reference.json``
    where they were measured already for that budget, else measured now and written there:
    ``{"game", "time_budget_s", "uniform", "cfr_plus": rows, "provenance"}``."""
    path = folder / "reference.json"
    if path.exists():
        try:
            saved = read_json(path)
        except ValueError:
            saved = None
        if isinstance(saved, dict) and saved.get("version") == VERSION and \
                saved.get("game") == spec and saved.get("time_budget_s") == time_budget_s:
            return saved
    made = {"version": VERSION, "game": spec, "time_budget_s": time_budget_s,
            "uniform": uniform_exploitability(spec),
            "cfr_plus": cfr_plus_curve(spec, time_budget_s), "provenance": provenance()}
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(made, indent=1))
    return made
