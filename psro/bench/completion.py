"""Which of a suite's planned runs have ended, for a report made before the suite finished:
a run has ended when the suite recorded its outcome (``seed-N.done.json``); one without it was
killed, is running now, or has not started, and running the suite again resumes or starts it.
"""

from __future__ import annotations

from pathlib import Path

from psro.bench.folder import seed_ranges
from psro.bench.plan import PlannedRun, plan
from psro.bench.suites import from_description


def planned_runs(described: dict, out: str | Path) -> list[PlannedRun] | None:
    """Every run the suite ``described`` (the folder ``out``'s ``suite.json``) plans, in the
    order they run; None where it cannot be read back into a suite this version of the toolkit
    can run."""
    try:
        return plan(from_description(described), Path(out))
    except (ValueError, KeyError, TypeError, AttributeError):  # ConfigError is a ValueError
        return None


def seeds_cell(text: str, done: int, planned: dict, game: dict, method: str) -> str:
    """A seeds cell, with ``of N`` where fewer runs ended than the suite plans (``planned``:
    the planned runs' count per (game label, method label))."""
    total = planned.get((game["label"], method))
    return f"{text} of {total}" if total is not None and done < total else text


def missing_methods(game: dict, reported: list[str], planned: dict) -> list[str]:
    """The game's methods that plan runs but have none ended (their table rows say so)."""
    return [m["label"] for m in game["methods"]
            if m["label"] not in reported and (game["label"], m["label"]) in planned]


def unfinished_lines(planned: list[PlannedRun]) -> list[str]:
    """Markdown lines naming the planned runs that have not ended, per game and method in
    the suite's order: started (killed, or running now) or not started."""
    left: dict[tuple[str, str], dict[str, list[int]]] = {}
    for run in planned:  # seed by seed: the first seed meets every method in order
        states = left.setdefault((run.game.label, run.method.label), {})
        if not run.finished:
            state = "started, not ended (killed, or running now)" \
                if (run.path / "config.json").exists() else "not started"
            states.setdefault(state, []).append(run.seed)
    return [f"- {game} · {method}: " + "; ".join(
        f"{state}: seed{'s' if len(seeds) > 1 else ''} {seed_ranges(seeds)}"
        for state, seeds in states.items()) for (game, method), states in left.items() if states]
