"""``psro report``: turn run directories into ``report.md`` and a self-contained
``report.html`` with PNG figures.

Read from the run files only (config, metrics, mixtures, payoff table), so a report needs
neither the game tree nor the networks. Figures: exploitability and per-player gains against
iteration and wall time (log scale; approximate values drawn hollow and labelled as lower
bounds), the meta-strategy of every iteration (stacked areas), the final payoff table as a
heatmap with the meta-strategy's support outlined, Elo and Nash-averaging ratings of the
population, and where the time went.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import numpy as np

import solvers
from psro import checkpoint, figures
from psro.errors import RunDirectoryError
from psro.loop import TIMING_FIELDS as TIME_FIELDS


class RunRecord:
    """One run directory, read for reporting (through :mod:`psro.checkpoint`, networks not
    loaded)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        saved = checkpoint.load(self.path, networks=False)
        self.config = saved.config.to_dict()
        self.metrics = saved.state.metrics
        self.mixtures = [row["mixtures"] for row in saved.state.mixture_history]
        self.payoffs = {"values": saved.state.table.values}
        self.label = figures.plain_text(
            f"{self.path.name}: {self.config.get('game')} / {self.config.get('oracle')} / "
            f"{self.config.get('meta_solver')}")

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


def write_report(run_dirs: list[str | Path], out: str | Path) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and the PNG figures into ``out``.

    Raises :class:`~psro.errors.RunDirectoryError` naming any argument that is not a run
    directory. Returns the paths of the two reports.
    """
    if not run_dirs:
        raise RunDirectoryError("give at least one run directory")
    records = [RunRecord(d) for d in run_dirs]
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        return _write(records, out)
    except OSError as err:
        raise RunDirectoryError(f"cannot write the report to {out}: {err.strerror or err}") \
            from None


def _write(records: list[RunRecord], out: Path) -> tuple[Path, Path]:
    shown, sections = _draw_figures(records, out)
    md = _summary_markdown(records)
    for title, file in shown:
        md += [f"## {title}", "", f"![{title}]({file})", ""]
    for rec, own, rating in sections:
        md += _run_markdown(rec, own, rating)
    md_path = out / "report.md"
    md_path.write_text("\n".join(md))
    html_path = out / "report.html"
    html_path.write_text(_markdown_to_html(md, out))
    return md_path, html_path


def _draw_figures(records: list[RunRecord], out: Path) -> tuple[list, list]:
    """The figures of all runs together, and each run's own figures and ratings."""
    shown: list[tuple[str, str]] = []
    figures.plot_curves(records, "iteration", out / "exploitability_iteration.png")
    shown.append(("Exploitability by iteration", "exploitability_iteration.png"))
    figures.plot_curves(records, "wall_time_s", out / "exploitability_time.png")
    shown.append(("Exploitability by wall time", "exploitability_time.png"))
    figures.plot_gains(records, out / "gains.png")
    shown.append(("Per-player best-response gains (NashConv terms)", "gains.png"))
    sections = []
    for k, rec in enumerate(records):
        name = f"run{k}"
        own = []
        if rec.mixtures:
            figures.plot_mixtures(rec, out / f"{name}_mixtures.png")
            own.append(("Meta-strategy by iteration", f"{name}_mixtures.png"))
        if figures.plot_payoffs(rec, out / f"{name}_payoffs.png"):
            own.append(("Final payoff table (player 0), meta-strategy support marked",
                        f"{name}_payoffs.png"))
        rating = ratings(rec)
        if rating is not None:
            figures.plot_ratings(rating, out / f"{name}_ratings.png")
            own.append(("Ratings of the population", f"{name}_ratings.png"))
        sections.append((rec, own, rating))
    figures.plot_time(records, out / "time.png")
    shown.append(("Where the time went", "time.png"))
    return shown, sections


def _summary_markdown(records: list[RunRecord]) -> list[str]:
    md = ["# PSRO report", ""]
    md += ["| run | game | oracle | meta-solver | iterations | final exploitability | kind | "
           "wall time (s) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for rec in records:
        last = rec.metrics[-1]
        md.append(f"| {rec.path.name} | {rec.config.get('game')} | {rec.config.get('oracle')} | "
                  f"{rec.config.get('meta_solver')} | {last['iteration']} | "
                  f"{_fmt(last.get('exploitability'))} | {last.get('exploitability_kind')} | "
                  f"{_fmt(last.get('wall_time_s'))} |")
    md.append("")
    if any(r.get("exploitability_kind") == "approximate_lower_bound"
           for rec in records for r in rec.metrics):
        md += ["Approximate exploitability (games too large to walk) is a lower bound: a "
               "trained best response's gain, estimated by Monte Carlo.", ""]
    return md


def _run_markdown(rec: RunRecord, own: list, rating: dict | None) -> list[str]:
    md = [f"## Run {rec.path.name}", "", f"Directory: `{rec.path}`", "", "Config:", "",
          "| key | value |", "| --- | --- |"]
    md += [f"| {k} | `{json.dumps(v)}` |" for k, v in sorted(rec.config.items())]
    md += ["", "Time spent (s):", "", "| part | seconds |", "| --- | --- |"]
    md += [f"| {f[:-2]} | {sum(r.get(f) or 0.0 for r in rec.metrics):.3f} |"
           for f in TIME_FIELDS]
    md.append("")
    md += ["| iteration | population | exploitability | nash_conv | wall_time_s |",
           "| --- | --- | --- | --- | --- |"]
    md += [f"| {r['iteration']} | {r['population_size']} | {_fmt(r.get('exploitability'))} "
           f"| {_fmt(r.get('nash_conv'))} | {_fmt(r.get('wall_time_s'))} |"
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


def _markdown_to_html(lines: list[str], folder: Path) -> str:
    """A small renderer for the Markdown this module writes: headings, tables, lists, images
    (embedded as base64 so the HTML file stands alone) and paragraphs."""
    body = []
    table: list[list[str]] = []

    def flush_table():
        if not table:
            return
        rows = [r for r in table if not all(set(c.strip()) <= {"-"} for c in r)]
        head, *rest = rows
        body.append("<table><tr>" + "".join(f"<th>{c}</th>" for c in head) + "</tr>" +
                    "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>"
                            for r in rest) + "</table>")
        table.clear()

    for line in lines:
        if line.startswith("|"):
            table.append([html.escape(c.strip()).replace("`", "")
                          for c in line.strip("|").split("|")])
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{html.escape(line[level:].strip())}</h{level}>")
        elif line.startswith("!["):
            alt, file = line[2:].split("](")
            data = base64.b64encode((folder / file.rstrip(")")).read_bytes()).decode()
            body.append(f'<p><img alt="{html.escape(alt)}" src="data:image/png;base64,{data}"'
                        f' style="max-width:100%"></p>')
        elif line.startswith("- "):
            body.append(f"<ul><li>{html.escape(line[2:])}</li></ul>")
        elif line.strip():
            body.append(f"<p>{html.escape(line).replace('`', '')}</p>")
    flush_table()
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto;}"
             "table{border-collapse:collapse;margin:1em 0;font-size:0.85em}"
             "td,th{border:1px solid #ccc;padding:2px 6px}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>PSRO report</title>"
            f"<style>{style}</style></head><body>{''.join(body)}</body></html>")
