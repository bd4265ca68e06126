"""The large tier of a suite's report: each method's shared-budget lower bound (with its
interval over seeds, or its own Monte Carlo interval for one seed), its Elo rating and
head-to-head scores, the figure of the bounds measured during the runs against env steps, and a
note where the bounds cannot separate the methods."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from psro.bench.completion import seeds_cell
from psro.bench.folder import slug
from psro.bench.head_to_head_table import table_rows
from psro.bench.report_common import finished_groups, read_measurement, style
from psro.bench.results_table import table_row
from psro.evaluation.monte_carlo import Z95
from psro.reports import RunRecord
from psro.reports.groups import Curve, RunGroup, interval


def _measured(group: RunGroup) -> Curve | None:
    """The group's lower bounds measured during its runs, then the shared one at each run's
    end, against env steps: the mean over its runs at each env-step count where one was
    measured (each run's last measurement so far), over the steps every run reached."""
    series = []
    for rec in group.records:
        points = [(r["env_steps"], r["exploitability"]) for r in rec.metrics
                  if r.get("exploitability") is not None]
        if points and (bound := _shared_bound(rec)) is not None:
            points.append((rec.metrics[-1].get("env_steps") or 0, bound))
        series.append(np.array(points, dtype=float).reshape(-1, 2).T)
    if not series or any(len(x) == 0 for x, _ in series):
        return None
    start, end = max(x[0] for x, _ in series), min(x[-1] for x, _ in series)
    grid = np.unique(np.concatenate([x[(x >= start) & (x <= end)] for x, _ in series]))
    values = np.stack([y[np.searchsorted(x, grid, side="right") - 1] for x, y in series])
    return interval(grid, values)


def _bounds(group: RunGroup | None) -> tuple[list[float], list[float], list[float], bool]:
    """The shared-budget lower bounds of the group's runs (``seed-N.bound.json`` beside
    each), the env steps each run took, each bound's own 95% half-width (its Monte Carlo
    standard errors) and whether any value of the group, measured during its runs or at their
    end, is a lower bound (drawn hollow) rather than a compiled kernel's exact value."""
    records = group.records if group is not None else []
    found = [(bound, float(rec.metrics[-1].get("env_steps") or 0))
             for rec in records if (bound := _shared(rec)) is not None]
    kinds = [r.get("exploitability_kind") for rec in records for r in rec.metrics
             if r.get("exploitability") is not None] + \
        [bound.get("exploitability_kind") for bound, _ in found]
    return ([float(b["exploitability"]) for b, _ in found], [s for _, s in found],
            [_bound_half_width(b) for b, _ in found],
            not records or any(kind != "exact" for kind in kinds))


def _shared(rec: RunRecord) -> dict | None:
    """The run's shared measurement at its end (``seed-N.bound.json``), None where missing."""
    return read_measurement(rec.path.with_name(f"{rec.path.name}.bound.json"))


def _shared_bound(rec: RunRecord) -> float | None:
    bound = _shared(rec)
    return None if bound is None else float(bound["exploitability"])


def _bound_half_width(bound: dict) -> float:
    """The 95% half-width of a run's shared bound from its players' standard errors (as a
    run's own bounds give it), NaN where they were not recorded."""
    if bound.get("exploitability_kind") == "exact":
        return 0.0  # a compiled kernel's exact value
    errors = [v for k, v in bound.items() if k.startswith("gain_std_err_p")]
    if not errors or None in errors:
        return math.nan
    return float(Z95 * math.sqrt(sum(e * e for e in errors)) / len(errors))


def _inseparable(game: str, found: dict[str, tuple[float, float]],
                 exact: bool = False) -> str | None:
    """A note where no two methods' values of ``game`` lie apart by more than their 95%
    half-widths (``found``: method -> (mean, half-width)): such numbers cannot rank them.
    ``exact``: every value is a compiled kernel's exact exploitability, not a lower bound."""
    pairs = [(a, b) for a in found for b in found if a < b]
    if not pairs or any(abs(found[a][0] - found[b][0]) > found[a][1] + found[b][1]
                        for a, b in pairs if not math.isnan(found[a][1] + found[b][1])):
        return None
    widest = max(h for _, h in found.values() if not math.isnan(h)) \
        if any(not math.isnan(h) for _, h in found.values()) else math.nan
    if exact:
        return (f"**{game}: the methods are not separated.** Every two methods' exact "
                f"exploitabilities lie within their 95% intervals over the seeds of each other "
                f"(half-widths up to {widest:.2g}), so neither the values, the figure nor an Elo "
                f"ranking built beside them tells the methods apart here: more seeds would.")
    return (f"**{game}: the methods are not separated.** Every two methods' lower bounds lie "
            f"within their 95% intervals of each other (half-widths up to {widest:.2g}), so "
            f"neither the bounds, the figure nor an Elo ranking built beside them tells the "
            f"methods apart here: more seeds, or a larger best-response budget, would.")


def large_tier(out: Path, game: dict, labels: list[str], rows: list, panels: list,
           h2h: list, planned: dict) -> str | None:
    """The large tier's rows, panel and head-to-head lines of ``game``; returns the note that
    its methods are not separated, where they are not (:func:`_inseparable`)."""
    path = out / slug(game["label"]) / "head_to_head.json"
    duel = read_measurement(path)
    curves, groups, found = [], {g.label: g for g in finished_groups(out, game)}, {}
    for method in game["methods"]:
        values, steps, own, approximate = _bounds(groups.get(method["label"]))
        if not values:
            if (game["label"], method["label"]) in planned:
                rows.append(table_row(game, method["label"],
                                      seeds_cell("0", 0, planned, game, method["label"]),
                                      (math.nan, math.nan), (math.nan, math.nan), ""))
            continue
        curve = interval(np.array([np.mean(steps)]), np.array(values)[:, None])
        during = _measured(groups[method["label"]]) if method["label"] in groups else None
        curves.append((method["label"], during if during is not None else curve, approximate,
                       style(method["label"], labels)))
        # over seeds where there are several, else the one bound's own Monte Carlo interval
        half = float(curve.high[0] - curve.mean[0]) if curve.n > 1 else float(np.mean(own))
        found[method["label"]] = (float(curve.mean[0]), half)
        seeds = seeds_cell(str(len(values)), len(values), planned, game, method["label"])
        rows.append(table_row(game, method["label"], seeds, (math.nan, math.nan),
                              (float(curve.mean[0]), half), "", float(np.mean(steps)),
                              duel["elo"].get(method["label"], math.nan) if duel else math.nan))
    if curves:
        panels.append((game["label"], curves))
    if duel:
        h2h += table_rows(game["label"], duel)
    return _inseparable(game["label"], found,
                        exact=bool(curves) and not any(c[2] for c in curves))
