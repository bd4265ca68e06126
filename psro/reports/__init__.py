"""``psro report``: turn run directories into ``report.md``, a self-contained
``report.html``, figures (PNG, plus PDF or SVG on request), and tables for papers.

Read from the run files only (config, metrics, mixtures, payoff table, provenance), so a
report needs neither the game tree nor the networks. Runs are grouped by method and labelled
by what tells them apart within their game (:mod:`psro.reports.groups`); a group's distinct runs are
aggregated (mean and 95% Student-t interval). Figures, one panel per game: exploitability
against iteration, wall time and (trained oracles) environment steps, and per-player gains
(log scale, an exact floor at 1e-10, approximate values drawn hollow and labelled as lower
bounds); where the time went per group; and, per run where asked (``per_run``; by default
for up to :data:`PER_RUN_AUTO` runs), its meta-strategies, its final payoff table with the
meta-strategy's support marked, and its ratings (a table). Tables: ``table.csv`` and
``table.tex`` (booktabs) of final figures per game and group, and the aggregated curves as
``curves_<axis>.csv``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import solvers
from psro.errors import RunDirectoryError
from psro.reports import figures, groups
from psro.reports import markdown as report_markdown
from psro.reports import tables as report_tables
from psro.reports.html import markdown_to_html
from psro.storage import checkpoint
from psro.storage.files import (
    as_path,
    atomic_write_text,
    earlier_output,
    finish_output,
)
from psro.storage.lock import DirectoryLock


class RunRecord:
    """One run directory, read for reporting (through :mod:`psro.storage.checkpoint`, networks not
    loaded)."""

    def __init__(self, path: str | Path):
        self.path = as_path(path, "a run directory")
        saved = checkpoint.load(self.path, networks=False)
        self.config = saved.config.to_dict()
        self.evaluation = saved.state.evaluation
        self.metrics = saved.state.metrics
        self.mixtures = [row["mixtures"] for row in saved.state.mixture_history]
        self.payoffs = {"values": saved.state.table.values}
        self.provenance = saved.manifest.get("provenance")
        """What made the run (:mod:`psro.storage.provenance`); None for runs made before it was
        recorded."""
        self.ended = saved.ended
        """Whether the run ended (False: killed, still running or stepped by hand; None for
        runs made before run directories recorded it)."""
        self.label = str(self.path)
        """Set by the report: the run's group label and seed."""
        self.name = ""
        """Set by the report: the run's short name (``run3``)."""

    def series(self, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(iterations, values, approximate?) for the rows where ``key`` was measured."""
        rows = [r for r in self.metrics if r.get(key) is not None]
        its = np.array([r["iteration"] for r in rows])
        vals = np.array([r[key] for r in rows], dtype=float)
        approx = np.array([r.get("exploitability_kind") == "approximate_lower_bound"
                           for r in rows])
        return its, vals, approx


def ratings(rec: RunRecord) -> dict | None:
    """Elo and Nash-averaging ratings of a two-player zero-sum population (else None).

    Elo is fitted over both seats' members together from the cross-seat results (payoffs
    mapped to win rates); Nash averaging rates each seat against the other's maximum-entropy
    Nash of the table.
    """
    if rec.payoffs is None or rec.payoffs["values"].ndim != 3 or \
            not np.all(np.isfinite(rec.payoffs["values"])):  # no table: entries not estimated
        return None
    A, B = rec.payoffs["values"]
    if solvers.constant_sum([A, B]) is None:
        return None
    n, m = A.shape
    M = float(np.abs(A).max()) or 1.0
    win = np.full((n + m, n + m), 0.5)
    win[:n, n:] = (A + M) / (2 * M)
    win[n:, :n] = ((-A + M) / (2 * M)).T
    observed = np.zeros_like(win, dtype=bool)
    observed[:n, n:] = observed[n:, :n] = True
    elo = solvers.elo_ratings(win, observed=observed)
    averaging = solvers.nash_averaging(A)
    return {"elo_p0": elo[:n], "elo_p1": elo[n:], "nash_p0": averaging.row_ratings,
            "nash_p1": averaging.col_ratings}


PER_RUN_AUTO = 4
"""Reports of up to this many runs get a section per run by default."""


def write_report(run_dirs: list[str | Path] | str | Path, out: str | Path,
                 labels: dict | None = None, formats: tuple[str, ...] = ("png",),
                 per_run: bool | None = None) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html``, the figures and the tables into ``out`` for the
    runs ``run_dirs`` (a list of run directories, or one).

    ``labels`` maps run directories to group labels (overriding the automatic ones);
    ``formats`` adds ``pdf`` or ``svg`` copies of every figure (PNG is always written);
    ``per_run`` adds a section per run (None: for reports of up to :data:`PER_RUN_AUTO`).
    Raises :class:`~psro.errors.RunDirectoryError` naming any argument that is not a run
    directory, or an output folder that cannot be written. Returns the paths of the two
    reports.
    """
    if isinstance(run_dirs, (str, os.PathLike)):  # one run; iterating it gave its characters
        run_dirs = [run_dirs]
    if not run_dirs:
        raise RunDirectoryError("give at least one run directory")
    as_path(out, "the report's output folder")
    unknown = sorted(set(formats) - set(figures.FORMATS))
    if unknown:
        raise RunDirectoryError(f"unknown figure format {unknown[0]!r}; accepted: "
                                f"{', '.join(figures.FORMATS)}")
    records = [RunRecord(d) for d in run_dirs]
    given = {str(Path(k)).rstrip("/"): v for k, v in (labels or {}).items()}
    missing = [k for k in given if not any(k in (str(r.path), str(r.path.resolve()))
                                           for r in records)]
    if missing:
        raise RunDirectoryError(f"--label names {missing[0]}, which is not one of the runs")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunDirectoryError(f"cannot write the report to {out}: it is not a folder (a "
                                f"report goes into a new or empty folder, or replaces an "
                                f"earlier report); nothing was written")
    run_groups = groups.group_runs(records, given)
    lock = DirectoryLock(out, holder="report")
    try:
        out.mkdir(parents=True, exist_ok=True)
        lock.acquire()
        try:
            earlier = earlier_output(out)
        except ValueError as err:
            raise RunDirectoryError(f"cannot write the report to {out}: {err} (a report goes "
                                    f"into a new or empty folder, or replaces an earlier "
                                    f"report); nothing was written") from None
        if per_run is None:
            per_run = len(records) <= PER_RUN_AUTO
        written = _write(run_groups, out, tuple(formats), per_run)
        finish_output(out, earlier)
        return written
    except OSError as err:
        raise RunDirectoryError(f"cannot write the report to {out}: {err.strerror or err}") \
            from None
    finally:
        lock.release()


def _write(run_groups: list, out: Path, formats: tuple[str, ...],
           per_run: bool) -> tuple[Path, Path]:
    records = [rec for group in run_groups for rec in group.records]
    for k, rec in enumerate(records):
        rec.name = f"run{k}"
    for group in run_groups:
        for rec in group.records:
            rec.label = f"{group.game}: {group.label}, seed {rec.config.get('seed')}"
    shown = _draw_group_figures(run_groups, out, formats)
    figures.plot_time([(f"{g.game}: {g.label}", g.records) for g in run_groups],
                      out / "time.png", formats)
    shown.append(("Where the time went (writing the run directory included)", "time.png"))
    rows = groups.final_table(run_groups)
    atomic_write_text(out / "table.csv", report_tables.table_csv(rows))
    atomic_write_text(out / "table.tex", report_tables.table_tex(rows))
    md = report_markdown.summary(run_groups, rows)
    for title, file in shown:
        md += [f"## {title}", "", f"![{title}]({file})", ""]
    if per_run:
        for rec, own, rating in _draw_run_figures(records, out, formats):
            md += report_markdown.run_section(rec, own, rating)
    else:
        md += [f"Sections per run are left out for {len(records)} runs (`psro report "
               f"--runs` adds them).", ""]
    md_path = out / "report.md"
    atomic_write_text(md_path, "\n".join(md))
    html_path = out / "report.html"
    atomic_write_text(html_path, markdown_to_html(md, out))
    return md_path, html_path


def _panels(run_groups: list, x_key: str, y_key: str = "exploitability",
            per_player: str = "") -> list[tuple[str, list]]:
    """Per game, the curves of its groups: one per group, or with ``per_player`` (a column
    prefix such as ``"gain_p"``) one per group and player."""
    panels = []
    for game in dict.fromkeys(g.game for g in run_groups):
        curves = []
        for g in (g for g in run_groups if g.game == game):
            if x_key == "env_steps" and not any(r.get("env_steps") for rec in g.records
                                                for r in rec.metrics):
                continue  # no environment steps (an exact oracle): nothing on this axis
            keys = sorted(k for k in g.records[0].metrics[0] if k.startswith(per_player)) \
                if per_player else [y_key]
            for key in keys:
                curve = groups.aggregate(g, x_key, key)
                if curve is not None:
                    label = f"{g.label}: player {key[len(per_player):]}" if per_player \
                        else g.label
                    curves.append((label + _runs_text(g), curve,
                                   report_markdown.approximate(g)))
        if curves:
            panels.append((game, curves))
    return panels


def _runs_text(group) -> str:
    """What a legend entry says of the runs behind a curve: ``(n=3)`` for three distinct runs
    (the band is their 95% interval), ``(3 identical seeds)`` for a deterministic
    configuration, nothing for one run."""
    distinct, seeds = len(group.distinct), len(group.records)
    if distinct == 1:
        return f" ({seeds} identical seeds)" if seeds > 1 else ""
    return f" (n={distinct})" + (f" of {seeds} seeds" if seeds > distinct else "")


def _draw_group_figures(run_groups: list, out: Path, formats: tuple[str, ...]) -> list:
    """Exploitability per game and group against each axis (and its curves as CSV), gains
    and JPSRO's gap."""
    shown = []
    has_steps = any((r.get("env_steps") or 0) > 0 for g in run_groups for rec in g.records
                    for r in rec.metrics)
    for x_key, xlabel in groups.X_AXES.items():
        if x_key == "env_steps" and not has_steps:
            continue
        panels = _panels(run_groups, x_key)
        if not panels:
            continue
        atomic_write_text(out / f"curves_{x_key}.csv", report_tables.curves_csv(
            {(g.game, g.label): curve for g in run_groups
             if (curve := groups.aggregate(g, x_key)) is not None}, x_key))
        title = "sample efficiency" if x_key == "env_steps" else xlabel
        figures.plot_panels(panels, xlabel, "exploitability (NashConv / players)",
                            f"Exploitability by {title}", out / f"exploitability_{x_key}.png",
                            formats, integer_x=x_key == "iteration")
        shown.append((f"Exploitability by {title}", f"exploitability_{x_key}.png"))
    gains = _panels(run_groups, "iteration", per_player="gain_p")
    if gains:
        figures.plot_panels(gains, "iteration", "best-response gain", "Per-player "
                            "best-response gains (NashConv terms)", out / "gains.png", formats,
                            integer_x=True)
        shown.append(("Per-player best-response gains (NashConv terms)", "gains.png"))
    diversity = _panels(run_groups, "iteration", per_player="diversity_p")
    if diversity:
        title = "Population diversity (DPP expected cardinality of the payoff rows)"
        figures.plot_panels(diversity, "iteration", "diversity", title, out / "diversity.png",
                            formats, integer_x=True, linear_y=True)
        shown.append((title, "diversity.png"))
    with_gap = [g for g in run_groups if "gap" in g.records[0].metrics[0]]
    gaps = _panels(with_gap, "iteration", "gap")
    if gaps:
        figures.plot_panels(gaps, "iteration", "(C)CE gap", "JPSRO: (C)CE gap of the joint "
                            "meta-distribution", out / "gap.png", formats, integer_x=True)
        shown.append(("JPSRO: (C)CE gap of the joint meta-distribution", "gap.png"))
    return shown


def _draw_run_figures(records: list, out: Path, formats: tuple[str, ...]) -> list:
    """Each run's meta-strategies, payoff table and ratings."""
    sections = []
    for rec in records:
        name, own = rec.name, []
        if rec.mixtures:
            figures.plot_mixtures(rec, out / f"{name}_mixtures.png", formats)
            own.append(("Meta-strategy by iteration", f"{name}_mixtures.png"))
        if figures.plot_payoffs(rec, out / f"{name}_payoffs.png", formats):
            own.append(("Final payoff table (player 0), meta-strategy support marked",
                        f"{name}_payoffs.png"))
        sections.append((rec, own, ratings(rec)))
    return sections
