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
from matplotlib.figure import Figure

import solvers
from psro import checkpoint
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
        self.label = f"{self.path.name}: {self.config.get('game')} / {self.config.get('oracle')}" \
                     f" / {self.config.get('meta_solver')}"

    def series(self, key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(iterations, values, approximate?) for the rows where ``key`` was measured."""
        rows = [r for r in self.metrics if r.get(key) is not None]
        its = np.array([r["iteration"] for r in rows])
        vals = np.array([r[key] for r in rows], dtype=float)
        approx = np.array([r.get("exploitability_kind") == "approximate_lower_bound"
                           for r in rows])
        return its, vals, approx


def _positive(values: np.ndarray) -> np.ndarray:
    return np.maximum(values, 1e-16)


def style_log_axis(ax, xlabel: str, ylabel: str, legend_size: int = 7) -> None:
    """Log-scale y axis with labels, grid and legend: the look of every curve figure."""
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend_size)


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, squeeze=True):
    """A figure and its axes, made without pyplot (so no plotting backend is chosen or
    changed in the caller's process)."""
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


def save_figure(fig, path: Path) -> None:
    """Lay the figure out and write it (PNG at 110 dpi)."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _save_log_plot(fig, ax, xlabel: str, ylabel: str, path: Path) -> None:
    style_log_axis(ax, xlabel, ylabel)
    save_figure(fig, path)


def _plot_curves(records: list[RunRecord], x_key: str, path: Path) -> None:
    fig, ax = new_figure(7, 4.2)
    for rec in records:
        rows = [r for r in rec.metrics if r.get("exploitability") is not None]
        if not rows:
            continue
        x = np.array([r[x_key] for r in rows], dtype=float)
        y = _positive(np.array([r["exploitability"] for r in rows], dtype=float))
        approx = np.array([r.get("exploitability_kind") == "approximate_lower_bound"
                           for r in rows])
        line, = ax.plot(x[~approx], y[~approx], marker=".", label=rec.label)
        if approx.any():
            ax.plot(x[approx], y[approx], linestyle="none", marker="o", markerfacecolor="none",
                    color=line.get_color(), label=f"{rec.label} (approximate: lower bound)")
    _save_log_plot(fig, ax, "iteration" if x_key == "iteration" else "wall time (s)",
                   "exploitability (NashConv / players)", path)


def _plot_gains(records: list[RunRecord], path: Path) -> None:
    fig, ax = new_figure(7, 4.2)
    for rec in records:
        players = sorted(k for k in rec.metrics[0] if k.startswith("gain_p")
                         and not k.startswith("gain_std"))
        for key in players:
            its, vals, approx = rec.series(key)
            if len(its):
                ax.plot(its, _positive(vals), marker=".", label=f"{rec.label}: {key[5:]}")
    _save_log_plot(fig, ax, "iteration", "best-response gain per player", path)


def _plot_mixtures(rec: RunRecord, path: Path) -> None:
    players = len(rec.mixtures[-1])
    fig, axes = new_figure(4.5 * players, 3.6, 1, players, squeeze=False)
    for p in range(players):
        size = len(rec.mixtures[-1][p])
        table = np.zeros((len(rec.mixtures), size))
        for t, mix in enumerate(rec.mixtures):
            table[t, :len(mix[p])] = mix[p]
        ax = axes[0, p]
        ax.stackplot(np.arange(len(rec.mixtures)), table.T, linewidth=0.2)
        ax.set_xlabel("iteration")
        ax.set_ylabel(f"player {p}: weight of member k")
        ax.set_ylim(0, 1)
        ax.set_title(f"meta-strategy, player {p}", fontsize=9)
    save_figure(fig, path)


def _plot_payoffs(rec: RunRecord, path: Path) -> bool:
    if rec.payoffs is None or rec.payoffs["values"].ndim != 3:
        return False
    values = rec.payoffs["values"][0]
    fig, ax = new_figure(5.5, 4.6)
    image = ax.imshow(values, cmap="RdBu", vmin=-np.abs(values).max(), vmax=np.abs(values).max())
    fig.colorbar(image, ax=ax, label="player 0 payoff")
    x, y = (np.asarray(m) for m in rec.mixtures[-1])
    for i in np.flatnonzero(x > 1e-6):
        ax.axhline(i, color="k", linewidth=0.6, alpha=0.6)
    for j in np.flatnonzero(y > 1e-6):
        ax.axvline(j, color="k", linewidth=0.6, alpha=0.6)
    ax.set_xlabel("player 1 member (support lines: meta-strategy > 1e-6)")
    ax.set_ylabel("player 0 member")
    save_figure(fig, path)
    return True


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


def _plot_ratings(rating: dict, path: Path) -> None:
    fig, axes = new_figure(10, 3.6, 1, 2)
    for ax, key, title in ((axes[0], "elo", "Elo (cross-seat results)"),
                           (axes[1], "nash", "Nash averaging (payoff vs. opponent Nash)")):
        for p, offset in ((0, -0.2), (1, 0.2)):
            vals = rating[f"{key}_p{p}"]
            ax.bar(np.arange(len(vals)) + offset, vals, width=0.4, label=f"player {p}")
        ax.set_xlabel("population member")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, path)


def _plot_time(records: list[RunRecord], path: Path) -> None:
    fig, ax = new_figure(7, 0.6 + 0.5 * len(records))
    left = np.zeros(len(records))
    for field in TIME_FIELDS:
        vals = np.array([sum(r.get(field) or 0.0 for r in rec.metrics) for rec in records])
        ax.barh(np.arange(len(records)), vals, left=left, label=field[:-2])
        left += vals
    ax.set_yticks(np.arange(len(records)), [rec.path.name for rec in records])
    ax.set_xlabel("seconds")
    ax.legend(fontsize=7, ncol=4)
    save_figure(fig, path)


def _fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def write_report(run_dirs: list[str | Path], out: str | Path) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and the PNG figures into ``out``.

    Raises :class:`~psro.runs.RunDirectoryError` (a ``ValueError``) naming any argument that
    is not a run directory. Returns the paths of the two reports.
    """
    if not run_dirs:
        raise RunDirectoryError("give at least one run directory")
    records = [RunRecord(d) for d in run_dirs]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, str]] = []
    _plot_curves(records, "iteration", out / "exploitability_iteration.png")
    figures.append(("Exploitability by iteration", "exploitability_iteration.png"))
    _plot_curves(records, "wall_time_s", out / "exploitability_time.png")
    figures.append(("Exploitability by wall time", "exploitability_time.png"))
    _plot_gains(records, out / "gains.png")
    figures.append(("Per-player best-response gains (NashConv terms)", "gains.png"))
    sections = []
    for k, rec in enumerate(records):
        name = f"run{k}"
        own = []
        if rec.mixtures:
            _plot_mixtures(rec, out / f"{name}_mixtures.png")
            own.append(("Meta-strategy by iteration", f"{name}_mixtures.png"))
        if _plot_payoffs(rec, out / f"{name}_payoffs.png"):
            own.append(("Final payoff table (player 0), meta-strategy support marked",
                        f"{name}_payoffs.png"))
        rating = ratings(rec)
        if rating is not None:
            _plot_ratings(rating, out / f"{name}_ratings.png")
            own.append(("Ratings of the population", f"{name}_ratings.png"))
        sections.append((rec, own, rating))
    _plot_time(records, out / "time.png")
    figures.append(("Where the time went", "time.png"))

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
    for title, file in figures:
        md += [f"## {title}", "", f"![{title}]({file})", ""]
    for rec, own, rating in sections:
        md += [f"## Run {rec.path.name}", "", f"Directory: `{rec.path}`", "", "Config:", "",
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
    md_path = out / "report.md"
    md_path.write_text("\n".join(md))
    html_path = out / "report.html"
    html_path.write_text(_markdown_to_html(md, out))
    return md_path, html_path


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
