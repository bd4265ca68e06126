"""The figures of ``psro report``, drawn without pyplot (no plotting backend is chosen or
changed in the caller's process). Each ``plot_*`` function takes run records (config, metrics,
mixtures, payoffs; see :class:`psro.report.RunRecord`) and writes one PNG."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

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
    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


def save_figure(fig, path: Path) -> None:
    """Lay the figure out and write it (PNG at 110 dpi)."""
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def _save_log_plot(fig, ax, xlabel: str, ylabel: str, path: Path) -> None:
    style_log_axis(ax, xlabel, ylabel)
    save_figure(fig, path)


def plot_curves(records: list, x_key: str, path: Path) -> None:
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


def plot_gains(records: list, path: Path) -> None:
    fig, ax = new_figure(7, 4.2)
    for rec in records:
        players = sorted(k for k in rec.metrics[0] if k.startswith("gain_p")
                         and not k.startswith("gain_std"))
        for key in players:
            its, vals, approx = rec.series(key)
            if len(its):
                ax.plot(its, _positive(vals), marker=".", label=f"{rec.label}: {key[5:]}")
    _save_log_plot(fig, ax, "iteration", "best-response gain per player", path)


def plot_mixtures(rec, path: Path) -> None:
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


def plot_payoffs(rec, path: Path) -> bool:
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


def plot_ratings(rating: dict, path: Path) -> None:
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


def plot_time(records: list, path: Path) -> None:
    fig, ax = new_figure(7, 0.6 + 0.5 * len(records))
    left = np.zeros(len(records))
    for field in TIME_FIELDS:
        vals = np.array([sum(r.get(field) or 0.0 for r in rec.metrics) for rec in records])
        ax.barh(np.arange(len(records)), vals, left=left, label=field[:-2])
        left += vals
    ax.set_yticks(np.arange(len(records)), [plain_text(rec.path.name) for rec in records])
    ax.set_xlabel("seconds")
    ax.legend(fontsize=7, ncol=4)
    save_figure(fig, path)
