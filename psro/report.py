"""``psro report``: turn run directories into ``report.md``, a self-contained
``report.html``, figures (PNG, plus PDF or SVG on request), and tables for papers.

Read from the run files only (config, metrics, mixtures, payoff table), so a report needs
neither the game tree nor the networks. Runs are grouped by configuration and labelled by what
differs between groups (:mod:`psro.groups`); seeds of a group are aggregated (mean and 95%
Student-t interval). Figures: exploitability against iteration, wall time and (PPO runs)
environment steps, per-player gains (log scale; approximate values drawn hollow and labelled
as lower bounds), each run's meta-strategies (stacked areas, or a heatmap past 20 members), its
final payoff table as a heatmap with the meta-strategy's support marked, Elo and
Nash-averaging ratings, and where the time went (writing the run directory included). Tables:
``table.csv`` and ``table.tex`` (booktabs) of final figures per group, and the aggregated
curves as ``curves_<axis>.csv``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import solvers
from psro import checkpoint, figures, groups
from psro.errors import RunDirectoryError
from psro.files import DirectoryLock, atomic_write_text, earlier_output, finish_output
from psro.loop import TIMING_FIELDS as TIME_FIELDS
from psro.report_html import markdown_to_html


class RunRecord:
    """One run directory, read for reporting (through :mod:`psro.checkpoint`, networks not
    loaded)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        saved = checkpoint.load(self.path, networks=False)
        self.config = saved.config.to_dict()
        self.evaluation = saved.state.evaluation
        self.metrics = saved.state.metrics
        self.mixtures = [row["mixtures"] for row in saved.state.mixture_history]
        self.payoffs = {"values": saved.state.table.values}
        self.label = str(self.path)
        """Set by the report: the run's group label and seed."""

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
    if rec.payoffs is None or rec.payoffs["values"].ndim != 3:
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


def _fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_report(run_dirs: list[str | Path], out: str | Path, labels: dict | None = None,
                 formats: tuple[str, ...] = ("png",)) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html``, the figures and the tables into ``out``.

    ``labels`` maps run directories to group labels (overriding the automatic ones);
    ``formats`` adds ``pdf`` or ``svg`` copies of every figure (PNG is always written).
    Raises :class:`~psro.errors.RunDirectoryError` naming any argument that is not a run
    directory, or an output folder that cannot be written. Returns the paths of the two
    reports.
    """
    if not run_dirs:
        raise RunDirectoryError("give at least one run directory")
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
        written = _write(run_groups, out, tuple(formats))
        finish_output(out, earlier)
        return written
    except OSError as err:
        raise RunDirectoryError(f"cannot write the report to {out}: {err.strerror or err}") \
            from None
    finally:
        lock.release()


def _write(run_groups: list, out: Path, formats: tuple[str, ...]) -> tuple[Path, Path]:
    records = [rec for group in run_groups for rec in group.records]
    for group in run_groups:
        for rec in group.records:
            rec.label = f"{group.label}, seed {rec.config.get('seed')}"
    seen: dict[str, int] = {}
    for rec in records:  # the same run given twice, or two copies: keep labels apart
        seen[rec.label] = seen.get(rec.label, 0) + 1
        if seen[rec.label] > 1:
            rec.label += f" ({seen[rec.label]})"
    shown = _draw_group_figures(run_groups, out, formats)
    sections = _draw_run_figures(records, out, formats)
    figures.plot_time(records, [r.label for r in records], out / "time.png", formats)
    shown.append(("Where the time went (writing the run directory included)", "time.png"))
    rows = groups.final_table(run_groups)
    atomic_write_text(out / "table.csv", groups.table_csv(rows))
    atomic_write_text(out / "table.tex", groups.table_tex(rows))
    md = _summary_markdown(run_groups, rows)
    for title, file in shown:
        md += [f"## {title}", "", f"![{title}]({file})", ""]
    for rec, own, rating in sections:
        md += _run_markdown(rec, own, rating)
    md_path = out / "report.md"
    atomic_write_text(md_path, "\n".join(md))
    html_path = out / "report.html"
    atomic_write_text(html_path, markdown_to_html(md, out))
    return md_path, html_path


def _draw_group_figures(run_groups: list, out: Path, formats: tuple[str, ...]) -> list:
    """Exploitability per group against each axis (and its curves as CSV), and gains."""
    shown = []
    has_steps = any((r.get("env_steps") or 0) > 0 for g in run_groups for rec in g.records
                    for r in rec.metrics)
    for x_key, xlabel in groups.X_AXES.items():
        if x_key == "env_steps" and not has_steps:
            continue
        curves = [(g.label, groups.aggregate(g, x_key), _approximate(g)) for g in run_groups]
        curves = [c for c in curves if c[1] is not None]
        if not curves:
            continue
        atomic_write_text(out / f"curves_{x_key}.csv", groups.curves_csv(
            {label: curve for label, curve, _ in curves}, x_key))
        figures.plot_group_curves(curves, xlabel, "exploitability (NashConv / players)",
                                  out / f"exploitability_{x_key}.png", formats)
        title = "sample efficiency" if x_key == "env_steps" else xlabel
        shown.append((f"Exploitability by {title}", f"exploitability_{x_key}.png"))
    gains = []
    for g in run_groups:
        players = sorted(k for k in g.records[0].metrics[0] if k.startswith("gain_p"))
        for key in players:
            curve = groups.aggregate(g, "iteration", key)
            if curve is not None:
                gains.append((f"{g.label}: player {key[6:]}", curve, _approximate(g)))
    if gains:
        figures.plot_group_curves(gains, "iteration", "best-response gain per player",
                                  out / "gains.png", formats)
        shown.append(("Per-player best-response gains (NashConv terms)", "gains.png"))
    gaps = [(g.label, curve, False) for g in run_groups
            if "gap" in g.records[0].metrics[0]
            and (curve := groups.aggregate(g, "iteration", "gap")) is not None]
    if gaps:
        figures.plot_group_curves(gaps, "iteration", "(C)CE gap of the joint distribution",
                                  out / "gap.png", formats)
        shown.append(("JPSRO: (C)CE gap of the joint meta-distribution", "gap.png"))
    return shown


def _approximate(group) -> bool:
    return any(r.get("exploitability_kind") == "approximate_lower_bound"
               for rec in group.records for r in rec.metrics)


def _draw_run_figures(records: list, out: Path, formats: tuple[str, ...]) -> list:
    """Each run's meta-strategies, payoff table and ratings."""
    sections = []
    for k, rec in enumerate(records):
        name, own = f"run{k}", []
        if rec.mixtures:
            figures.plot_mixtures(rec, out / f"{name}_mixtures.png", formats)
            own.append(("Meta-strategy by iteration", f"{name}_mixtures.png"))
        if figures.plot_payoffs(rec, out / f"{name}_payoffs.png", formats):
            own.append(("Final payoff table (player 0), meta-strategy support marked",
                        f"{name}_payoffs.png"))
        rating = ratings(rec)
        if rating is not None:
            figures.plot_ratings(rating, out / f"{name}_ratings.png", formats)
            own.append(("Ratings of the population", f"{name}_ratings.png"))
        sections.append((rec, own, rating))
    return sections


def _summary_markdown(run_groups: list, rows: list[dict]) -> list[str]:
    md = ["# PSRO report", "", "Final figures per configuration (mean +- 95% Student-t "
          "half-width across seeds; `table.csv`, `table.tex`):", "",
          "| configuration | seeds | iterations | final exploitability | kind | "
          "wall time (s) | env steps |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        its = f"{row['iterations_min']}" if row["iterations_min"] == row["iterations_max"] \
            else f"{row['iterations_min']}-{row['iterations_max']}"
        md.append(f"| {row['group']} | {row['seeds']} | {its} | "
                  f"{_pm(row, 'exploitability')} | {row['exploitability_kind']} | "
                  f"{_pm(row, 'wall_time_s')} | {_pm(row, 'env_steps')} |")
    md += ["", "| run | configuration | seed | directory |", "| --- | --- | --- | --- |"]
    md += [f"| {rec.label} | {g.label} | {rec.config.get('seed')} | `{rec.path}` |"
           for g in run_groups for rec in g.records]
    md.append("")
    if any(_approximate(g) for g in run_groups):
        md += ["Approximate exploitability (games too large to walk) is a lower bound: a "
               "trained best response's gain, estimated by Monte Carlo.", ""]
    return md


def _pm(row: dict, key: str) -> str:
    mean, half = row[key], row[f"{key}_half_width"]
    if np.isnan(mean):
        return "n/a"
    return f"{mean:.6g}" if np.isnan(half) else f"{mean:.6g} +- {half:.2g}"


def _run_markdown(rec: RunRecord, own: list, rating: dict | None) -> list[str]:
    md = [f"## Run: {rec.label}", "", f"Directory: `{rec.path}`", "", "Config:", "",
          "| key | value |", "| --- | --- |"]
    md += [f"| {k} | `{json.dumps(v)}` |" for k, v in sorted(rec.config.items())]
    md += ["", "Time spent (s):", "", "| part | seconds |", "| --- | --- |"]
    md += [f"| {f[:-2]} | {sum(r.get(f) or 0.0 for r in rec.metrics):.3f} |"
           for f in TIME_FIELDS]
    md.append("")
    has_gap = "gap" in rec.metrics[0]
    gap_head, gap_rule = (" gap |", " --- |") if has_gap else ("", "")
    md += [f"| iteration | population | exploitability | nash_conv |{gap_head} wall_time_s |",
           f"| --- | --- | --- | --- |{gap_rule} --- |"]
    md += [f"| {r['iteration']} | {r['population_size']} | {_fmt(r.get('exploitability'))} "
           f"| {_fmt(r.get('nash_conv'))} |"
           + (f" {_fmt(r.get('gap'))} |" if has_gap else "")
           + f" {_fmt(r.get('wall_time_s'))} |"
           for r in rec.metrics]
    md.append("")
    if rating is not None:
        md += ["Ratings (member: Elo / Nash averaging):", ""]
        for p in (0, 1):
            cells = ", ".join(f"{i}: {e:.0f} / {a:.3g}" for i, (e, a) in enumerate(
                zip(rating[f"elo_p{p}"], rating[f"nash_p{p}"], strict=True)))
            md.append(f"- player {p}: {cells}")
        md.append("")
    for title, file in own:
        md += [f"### {title}", "", f"![{title}]({file})", ""]
    return md
