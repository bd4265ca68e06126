"""The report of a suite (``psro bench SUITE --out DIR`` writes it to ``DIR/report``):
``report.md``, one figure per tier (one panel per game; ``walkable_steps.png`` adds the trained
oracles' exploitability against env steps), and the results table as ``results.csv`` and
``results.tex`` (booktabs).

Walkable tier, per game: exploitability against wall time, each method's mean over its distinct
runs with a 95% Student-t band (:mod:`psro.reports.groups`), OpenSpiel's CFR+ measured in the
same command, and the uniform policy; the table gives the exploitability at a quarter of the
budget and at its end, and the time to each threshold (the mean over the runs that reached it,
with how many did). Large tier, per game: each method's shared-budget lower bound
(:mod:`psro.bench.evaluation`), with its interval over seeds, its Elo rating and its
head-to-head scores; the figure draws each method's lower bounds measured during its runs
(``SuiteGame.bound_every``, the same budget) and the shared one at its end against env steps,
mean over seeds.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import numpy as np

from psro.bench.completion import missing_methods, planned_runs, seeds_cell, unfinished_lines
from psro.bench.folder import slug
from psro.bench.head_to_head_table import HEADER
from psro.bench.large_tier_report import large_tier
from psro.bench.plan import deterministic
from psro.bench.references import TREE_REFERENCES
from psro.bench.report_common import finished_groups, read_measurement, style
from psro.bench.results_table import cell, csv_text, table_row, tex_text
from psro.config import RunConfig
from psro.errors import RunDirectoryError
from psro.reports.figures import plot_panels
from psro.reports.groups import Curve, RunGroup, aggregate, interval
from psro.reports.tables import number_text
from psro.storage.files import atomic_write_text
from psro.storage.text_files import read_json

COLUMN_NOTES = (
    "- *at 1/4 budget*: walkable tier, the mean over a method's distinct runs of the "
    "exploitability each had at a quarter of the time budget (its last iteration finished by "
    "then), with the 95% half-width.",
    "- *at the end*: walkable tier, the mean of the exploitability at each run's end: its last "
    "iteration, which may finish past the budget (a run stops at the first iteration that "
    "ends at or after it); the figure's curves end there too, each run holding its final "
    "value. Large tier: the mean of the values measured at each run's end: lower bounds with "
    "the game's shared best-response budget, or exact where a compiled kernel measures the "
    "game (liar's dice, phantom tic-tac-toe, dark hex: psro.kernels.kernel_for).",
    "- *env steps*: large tier, the mean env steps a run took.",
    "- *time to threshold*: the mean wall time at which the runs that reached a threshold "
    "first measured an exploitability at or below it (how many of the runs did), whether "
    "before or after the budget.",
    "- *Elo*: large tier, the methods' ratings from their head-to-head results.")
"""What each column of the results table holds (written above it in ``report.md``)."""


def _method_labels(suite: dict) -> list[str]:
    """Every method label of the suite, in order of first appearance (one colour each)."""
    return list(dict.fromkeys(m["label"] for g in suite["games"] for m in g["methods"]))


def _seeds_text(group: RunGroup) -> str:
    config = RunConfig.from_dict({k: v for k, v in group.records[0].config.items()
                                  if k in RunConfig.__dataclass_fields__})
    if deterministic(config, "walkable"):
        return f"{len(group.records)} (deterministic)"
    n, distinct = len(group.records), len(group.distinct)
    return str(n) if n == distinct else f"{n} ({distinct} distinct)"


def _at(curve: Curve | None, x: float) -> tuple[float, float]:
    if curve is None:
        return math.nan, math.nan
    k = int(np.searchsorted(curve.x, x, side="right")) - 1
    if k < 0:
        return math.nan, math.nan
    half = (curve.high[k] - curve.mean[k]) if curve.n > 1 else math.nan
    return float(curve.mean[k]), float(half)


def _end(group: RunGroup) -> tuple[float, float]:
    """The mean over the group's distinct runs of the exploitability at each run's end (its
    last iteration, which may finish past the time budget) and its 95% half-width (NaN with
    one run)."""
    finals = np.array([values[-1] for rec in group.distinct
                       if len(values := _series(rec)[1])])
    if len(finals) == 0:
        return math.nan, math.nan
    curve = interval(np.zeros(1), finals[:, None])
    return float(curve.mean[0]), float(curve.high[0] - curve.mean[0]) if curve.n > 1 \
        else math.nan


def _crossings(series: list[tuple[np.ndarray, np.ndarray]], thresholds) -> str:
    cells = []
    for t in thresholds:
        times = [float(x[np.argmax(y <= t)]) for x, y in series if np.any(y <= t)]
        shown = f"{np.mean(times):.3g} s" if times else "-"
        cells.append(f"{t:g}: {shown} ({len(times)}/{len(series)})")
    return "; ".join(cells)


def _series(rec) -> tuple[np.ndarray, np.ndarray]:
    rows = [r for r in rec.metrics if r.get("exploitability") is not None]
    return (np.array([r["wall_time_s"] for r in rows]),
            np.array([r["exploitability"] for r in rows]))


def _walkable(out: Path, game: dict, labels: list[str], rows: list, panels: list,
              by_steps: list, diversity: list, planned: dict) -> None:
    budget, curves, stepped, diverse = float(game["time_budget_s"]), [], [], []
    found = finished_groups(out, game)
    for group in found:
        spread = aggregate(group, "iteration", "diversity_p0")
        if spread is not None:
            diverse.append((group.label, spread, False, style(group.label, labels)))
        if any(rec.metrics[-1].get("env_steps") for rec in group.records):
            steps = aggregate(group, "env_steps")
            if steps is not None:
                stepped.append((group.label, steps, False, style(group.label, labels)))
        curve = aggregate(group, "wall_time_s", hold=True)
        if curve is not None:
            curves.append((group.label, curve, False, style(group.label, labels)))
        q, fin = _at(curve, budget / 4), _end(group)
        crossed = _crossings([_series(r) for r in group.distinct], game["thresholds"])
        seeds = seeds_cell(_seeds_text(group), len(group.records), planned, game, group.label)
        rows.append(table_row(game, group.label, seeds, q, fin, crossed))
    for method in missing_methods(game, [g.label for g in found], planned):
        rows.append(table_row(game, method, seeds_cell("0", 0, planned, game, method),
                              (math.nan, math.nan), (math.nan, math.nan), ""))
    ref = read_measurement(out / slug(game["label"]) / "reference.json")
    if ref is not None:
        cfr = ref["cfr_plus"]
        x = np.array([r["wall_time_s"] for r in cfr])
        y = np.array([r["exploitability"] for r in cfr])
        curve = interval(x, y[None, :])
        curves.append(("CFR+ (OpenSpiel)", curve, False, style("CFR+ (OpenSpiel)", labels)))
        rows.append(table_row(game, "CFR+ (OpenSpiel)", "1", _at(curve, budget / 4),
                              (float(y[-1]), math.nan), _crossings([(x, y)],
                                                                   game["thresholds"])))
        for solver, solved in (ref.get("tree_solvers") or {}).items():
            _reference_line(game, TREE_REFERENCES.get(solver, solver), solved, budget,
                            labels, rows, curves)
        flat = np.array([ref["uniform"]] * 2)
        start = min([budget * 1e-3, *(c.x[c.x > 0].min() for _, c, *_ in curves
                                       if np.any(c.x > 0))])
        curves.append(("uniform policy", interval(np.array([start, budget]), flat[None, :]),
                       False, style("uniform policy", labels)))
        rows.append(table_row(game, "uniform policy", "-", (ref["uniform"], math.nan),
                              (ref["uniform"], math.nan), ""))
    if curves:
        panels.append((game["label"], curves))
    if stepped:
        by_steps.append((game["label"], stepped))
    if diverse:
        diversity.append((game["label"], diverse))


def _reference_line(game: dict, label: str, solved: list[dict], budget: float,
                    labels: list[str], rows: list, curves: list) -> None:
    """A tabular solver's reference line: its curve and its table row (a row of blanks where
    it measured nothing in the budget: an LP that HiGHS had not solved by then)."""
    if not solved:
        rows.append(table_row(game, label, "1", (math.nan, math.nan), (math.nan, math.nan), ""))
        return
    x = np.array([r["wall_time_s"] for r in solved])
    y = np.array([r["exploitability"] for r in solved])
    curve = interval(x, y[None, :])
    curves.append((label, curve, False, style(label, labels)))
    rows.append(table_row(game, label, "1", _at(curve, budget / 4), (float(y[-1]), math.nan),
                          _crossings([(x, y)], game["thresholds"])))


def _tier(out: Path, suite: dict, tier: str, title: str, labels: list[str], rows: list,
          h2h: list, target: Path, planned: dict) -> list[str]:
    """One tier's figures (exploitability; against env steps and population diversity for the
    walkable tier), its table rows added to ``rows`` and head-to-head lines to ``h2h``; returns
    its Markdown lines."""
    lines, panels, by_steps, diversity, notes = [], [], [], [], []
    for game in (g for g in suite["games"] if g["tier"] == tier):
        if tier == "walkable":
            _walkable(out, game, labels, rows, panels, by_steps, diversity, planned)
        elif (note := large_tier(out, game, labels, rows, panels, h2h, planned)) is not None:
            notes.append(note)
    if panels:
        xlabel = "wall time (s)" if tier == "walkable" else "environment steps"
        plot_panels(panels, xlabel, "exploitability", f"{tier} tier: {title}",
                    target / f"{tier}.png", log_x=tier == "walkable",
                    linear_y=tier == "large")
        lines += [f"## {tier.capitalize()} tier", "", f"![{tier} tier]({tier}.png)", ""]
        lines += [line for note in notes for line in (note, "")]
    if by_steps:
        plot_panels(by_steps, "environment steps", "exploitability",
                    "walkable tier, trained oracles: exploitability against environment "
                    "steps", target / "walkable_steps.png", log_x=True)
        lines += ["![walkable tier, trained oracles](walkable_steps.png)", ""]
    if diversity:
        plot_panels(diversity, "iteration", "diversity (player 0)", "Population diversity: "
                    "DPP expected cardinality of player 0's payoff rows",
                    target / "diversity.png", integer_x=True, linear_y=True)
        lines += ["![population diversity](diversity.png)", ""]
    return lines


def write_suite_report(out: str | Path, folder: str | Path | None = None) -> Path:
    """Write the report of the suite run in ``out`` (see the module docstring) into
    ``folder`` (default ``out/report``); returns the path of ``report.md``."""
    out = Path(out)
    try:
        suite = read_json(out / "suite.json")
    except ValueError as err:
        raise RunDirectoryError(f"{out} holds no suite that can be reported (suite.json: "
                                f"{err}); run the suite into it first") from None
    target = Path(folder) if folder is not None else out / "report"
    target.mkdir(parents=True, exist_ok=True)
    rows, h2h, lines = [], [], [f"# Suite {suite['name']}", ""]
    labels = _method_labels(suite)
    if suite.get("description"):
        lines += [suite["description"][0].upper() + suite["description"][1:] + ".", ""]
    runs = planned_runs(suite, out) or []
    planned = Counter((run.game.label, run.method.label) for run in runs)
    left = unfinished_lines(runs)
    if left:
        done = sum(1 for run in runs if run.finished)
        lines += [f"**Not finished:** {done} of {len(runs)} planned runs have ended; the "
                  f"figures and tables hold those only (the runs left are listed at the end; "
                  f"running the suite again into this folder continues it).", ""]
    for tier, title in (("walkable", "exploitability against wall time"),
                        ("large", "approximate exploitability (lower bound) at a shared "
                                  "best-response budget")):
        lines += _tier(out, suite, tier, title, labels, rows, h2h, target, planned)
    lines += ["## Results", "", *COLUMN_NOTES, "",
              "| game | method | seeds | at 1/4 budget | at the end | "
              "env steps | time to threshold (runs that reached it) | Elo |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['game']} | {r['method']} | {r['seeds']} | "
              f"{number_text(r['exploitability_quarter'], r['half_quarter'], True)} | "
              f"{number_text(r['exploitability_final'], r['half_final'], True)} | "
              f"{cell(r['env_steps'], ',.0f')} | {r['thresholds'] or '-'} | "
              f"{cell(r['elo'], '+.0f')} |" for r in rows]
    if h2h:
        lines += ["", *HEADER, *h2h]
    stopped = [(p, read_measurement(p)) for p in sorted(out.glob("*/*/seed-*.done.json"))]
    stopped = [(p, note) for p, note in stopped if note is not None and note.get("error")]
    if stopped:
        lines += ["", "## Runs that stopped short of their budget", "",
                  *(f"- `{p.relative_to(out).as_posix()[:-len('.done.json')]}` at iteration "
                    f"{note.get('iteration')}: {note.get('error')}" for p, note in stopped)]
    if left:
        lines += ["", "## Runs not finished", "", *left]
    atomic_write_text(target / "results.csv", csv_text(rows))
    atomic_write_text(target / "results.tex", tex_text(rows))
    md = target / "report.md"
    atomic_write_text(md, "\n".join(lines) + "\n")
    return md
