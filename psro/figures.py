"""The figures of ``psro report``, drawn without pyplot (no plotting backend is chosen or
changed in the caller's process). Each ``plot_*`` function takes run groups or records
(config, metrics, mixtures, payoffs; see :mod:`psro.groups` and :class:`psro.report.RunRecord`)
and writes one figure as ``path`` (PNG) plus a copy in each extra format (``pdf``, ``svg``)."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import numpy as np

from psro.files import atomic_write_bytes
from psro.loop import TIMING_FIELDS as TIME_FIELDS


def _positive(values: np.ndarray) -> np.ndarray:
    return np.maximum(values, 1e-16)


def plain_text(text: str) -> str:
    """``text`` as matplotlib shows it literally (a ``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


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
    from matplotlib.figure import Figure  # here, not at import: matplotlib may build a font cache

    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


FORMATS = ("png", "pdf", "svg")
"""Figure formats ``psro report --format`` accepts (PNG is always written: HTML embeds it)."""


def save_figure(fig, path: Path, formats: tuple[str, ...] = ()) -> None:
    """Lay the figure out and write it as ``path`` (PNG at 110 dpi) and in each of
    ``formats`` beside it (vector PDF or SVG, text kept as text). Each file is written whole
    and renamed into place (never through a link planted at its name)."""
    fig.tight_layout()
    _write_figure(fig, Path(path), "png", dpi=110)
    for fmt in formats:
        if fmt != "png":
            _write_figure(fig, Path(path).with_suffix(f".{fmt}"), fmt)


def _write_figure(fig, path: Path, fmt: str, **options) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, **options)
    atomic_write_bytes(path, lambda handle: handle.write(buffer.getvalue()))


def _save_log_plot(fig, ax, xlabel: str, ylabel: str, path: Path,
                   formats: tuple[str, ...]) -> None:
    style_log_axis(ax, xlabel, ylabel)
    save_figure(fig, path, formats)


def plot_group_curves(curves: list[tuple[str, object, bool]], xlabel: str, ylabel: str,
                      path: Path, formats: tuple[str, ...] = ()) -> None:
    """One line per group (``(label, Curve, approximate)``): the mean across seeds, with its
    95% interval shaded where there are two seeds or more (on the log axis, an interval whose
    lower end is at or below half the smallest mean is drawn to the bottom of the axis).
    Approximate values (lower bounds) are drawn as hollow markers."""
    fig, ax = new_figure(7, 4.2)
    means = np.concatenate([c.mean for _, c, _ in curves])
    floor = 0.5 * float(_positive(means).min()) if len(means) else 1e-16
    for label, curve, approx in curves:
        shown = f"{plain_text(label)} (n={curve.n})" if curve.n > 1 else plain_text(label)
        if approx:
            ax.plot(curve.x, _positive(curve.mean), linestyle="none", marker="o",
                    markerfacecolor="none", label=f"{shown} (approximate: lower bound)")
            continue
        style = {"marker": "."} if len(curve.x) <= 60 else {}
        line, = ax.plot(curve.x, _positive(curve.mean), label=shown, **style)
        if curve.n > 1:
            ax.fill_between(curve.x, np.maximum(curve.low, floor), curve.high,
                            color=line.get_color(), alpha=0.2, linewidth=0)
    ax.set_ylim(bottom=floor)
    _save_log_plot(fig, ax, xlabel, ylabel, path, formats)


HEATMAP_MEMBERS = 20
"""Populations larger than this have their meta-strategies drawn as a heatmap."""


def plot_mixtures(rec, path: Path, formats: tuple[str, ...] = ()):
    """Each player's meta-strategy by iteration: stacked areas for up to
    :data:`HEATMAP_MEMBERS` members, else a heatmap (iteration x member, weight as colour)."""
    players = len(rec.mixtures[-1])
    fig, axes = new_figure(4.5 * players, 3.6, 1, players, squeeze=False)
    for p in range(players):
        size = len(rec.mixtures[-1][p])
        table = np.zeros((len(rec.mixtures), size))
        for t, mix in enumerate(rec.mixtures):
            table[t, :len(mix[p])] = mix[p]
        ax = axes[0, p]
        if size > HEATMAP_MEMBERS:
            image = ax.imshow(table.T, origin="lower", aspect="auto", cmap="viridis",
                              interpolation="nearest", vmin=0, vmax=1)
            fig.colorbar(image, ax=ax, label="weight")
            ax.set_ylabel(f"player {p}: member")
        else:
            ax.stackplot(np.arange(len(rec.mixtures)), table.T, linewidth=0.2)
            ax.set_ylabel(f"player {p}: weight of member k")
            ax.set_ylim(0, 1)
        ax.set_xlabel("iteration")
        ax.set_title(f"meta-strategy, player {p}", fontsize=9)
    save_figure(fig, path, formats)
    return fig


def plot_payoffs(rec, path: Path, formats: tuple[str, ...] = ()) -> bool:
    """Player 0's payoff table as a heatmap; the final meta-strategy's support is marked by
    ticks on the axes (lines across the table when it is small), so the table stays readable
    at 200 members."""
    if rec.payoffs is None or rec.payoffs["values"].ndim != 3:
        return False
    values = rec.payoffs["values"][0]
    size = max(values.shape)
    side = min(10.0, 4.6 + size / 40)
    fig, ax = new_figure(side + 0.9, side)
    bound = float(np.abs(values).max()) or 1.0
    image = ax.imshow(values, cmap="RdBu", vmin=-bound, vmax=bound, interpolation="nearest")
    fig.colorbar(image, ax=ax, label="player 0 payoff", shrink=0.8)
    x, y = (np.asarray(m) for m in rec.mixtures[-1])
    rows, cols = np.flatnonzero(x > 1e-6), np.flatnonzero(y > 1e-6)
    if size <= 30:
        for i in rows:
            ax.axhline(i, color="k", linewidth=0.6, alpha=0.6)
        for j in cols:
            ax.axvline(j, color="k", linewidth=0.6, alpha=0.6)
    else:
        ax.plot(np.full(len(rows), -0.5), rows, ">", color="k", markersize=3, clip_on=False)
        ax.plot(cols, np.full(len(cols), -0.5), "v", color="k", markersize=3, clip_on=False)
    ax.set_xlabel("player 1 member (marked: meta-strategy > 1e-6)")
    ax.set_ylabel("player 0 member")
    save_figure(fig, path, formats)
    return True


def plot_ratings(rating: dict, path: Path, formats: tuple[str, ...] = ()) -> None:
    """Elo and Nash-averaging ratings of each seat's members, side by side."""
    fig, axes = new_figure(10, 3.6, 1, 2)
    for ax, key, title in ((axes[0], "elo", "Elo (cross-seat results)"),
                           (axes[1], "nash", "Nash averaging (payoff vs. opponent Nash)")):
        for p, offset in ((0, -0.2), (1, 0.2)):
            vals = rating[f"{key}_p{p}"]
            ax.bar(np.arange(len(vals)) + offset, vals, width=0.4, label=f"player {p}")
        ax.set_xlabel("population member")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
    save_figure(fig, path, formats)


def plot_time(records: list, labels: list[str], path: Path,
              formats: tuple[str, ...] = ()) -> None:
    """Seconds per phase of each run (oracle, evaluation, meta-solve, exploitability and
    writing the run directory), stacked."""
    lines = sum(textwrap.fill(label, 36).count("\n") + 1 for label in labels)
    fig, ax = new_figure(8, 1.2 + 0.25 * lines + 0.15 * len(records))
    left = np.zeros(len(records))
    for field in TIME_FIELDS:
        vals = np.array([sum(r.get(field) or 0.0 for r in rec.metrics) for rec in records])
        ax.barh(np.arange(len(records)), vals, left=left, label=field[:-2])
        left += vals
    ax.set_yticks(np.arange(len(records)),
                  [plain_text(textwrap.fill(label, 36)) for label in labels], fontsize=8)
    ax.set_xlabel("seconds")
    ax.legend(fontsize=7, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0))
    save_figure(fig, path, formats)
