"""The figures of ``psro report``, drawn without pyplot (no plotting backend is chosen or changed in
the caller's process). Each ``plot_*`` function takes run groups or records (config, metrics,
mixtures, payoffs; see :mod:`psro.reports.groups` and :class:`psro.reports.RunRecord`) and writes
one figure as ``path`` (PNG) plus a copy in each extra format (``pdf``, ``svg``)."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import numpy as np

from psro.metrics_row import TIMING_FIELDS as TIME_FIELDS
from psro.reports.groups import EXACT_FLOOR
from psro.storage.files import atomic_write_bytes


def _positive(values: np.ndarray) -> np.ndarray:
    return np.maximum(values, 1e-16)


def plain_text(text: str) -> str:
    """``text`` as matplotlib shows it literally (a ``$`` would start mathtext)."""
    return str(text).replace("$", r"\$")


def add_legend(ax, **options) -> None:
    """The axes' legend, where it has labelled curves (matplotlib warns of an empty one)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**options)


def style_log_axis(ax, xlabel: str, ylabel: str, legend_size: int = 7) -> None:
    """Log-scale y axis with labels, grid and legend: the look of every curve figure."""
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    add_legend(ax, fontsize=legend_size)


def new_figure(width: float, height: float, rows: int = 1, cols: int = 1, squeeze=True):
    """A figure and its axes, made without pyplot (so no plotting backend is chosen or
    changed in the caller's process)."""
    from matplotlib.figure import Figure  # here, not at import: matplotlib may build a font cache

    fig = Figure(figsize=(width, height))
    return fig, fig.subplots(rows, cols, squeeze=squeeze)


FORMATS = ("png", "pdf", "svg")
"""Figure formats ``psro report --format`` accepts (PNG is always written: HTML embeds it)."""


def save_figure(fig, path: Path, formats: tuple[str, ...] = (), tight: bool = True) -> None:
    """Lay the figure out (``tight``) and write it as ``path`` (PNG at 110 dpi) and in each
    of ``formats`` beside it (vector PDF or SVG, text kept as text). Each file is written
    whole and renamed into place (never through a link planted at its name)."""
    if tight:
        import warnings

        with warnings.catch_warnings():  # a figure too small for its text is still written
            warnings.simplefilter("ignore", UserWarning)
            fig.tight_layout()
    _write_figure(fig, Path(path), "png", dpi=110)
    for fmt in formats:
        if fmt != "png":
            _write_figure(fig, Path(path).with_suffix(f".{fmt}"), fmt)


def _write_figure(fig, path: Path, fmt: str, **options) -> None:
    """Draw and write one file. A label in a script the font lacks (CJK, say) is drawn as
    boxes without matplotlib's warnings: a report that worked prints only its own lines."""
    import logging
    import warnings

    buffer = io.BytesIO()
    font_log = logging.getLogger("matplotlib.font_manager")
    level = font_log.level
    font_log.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing from", category=UserWarning)
            warnings.filterwarnings("ignore", message="Matplotlib currently does not support",
                                    category=UserWarning)
            fig.savefig(buffer, format=fmt, **options)
    finally:
        font_log.setLevel(level)
    atomic_write_bytes(path, lambda handle: handle.write(buffer.getvalue()))


LEGEND_IN_PANEL = 6
"""Panels with more legend entries than this get one legend below the figure instead."""


def plot_panels(panels: list[tuple[str, list]], xlabel: str, ylabel: str, title: str,
                path: Path, formats: tuple[str, ...] = (), integer_x: bool = False,
                log_x: bool = False, linear_y: bool = False):
    """One panel per game (``panels``: ``(game, curves)``, each curve ``(label, Curve,
    approximate)`` or ``(label, Curve, approximate, style)`` with matplotlib line options such
    as a colour; never two games on one axis), log y axis. Each line is the mean over the
    group's distinct runs, with its 95% interval shaded where there are two or more (a curve
    ends where the group's shortest run ends, so the band covers only points where every run
    is alive). Values below :data:`psro.reports.groups.EXACT_FLOOR` are float noise around an exact
    equilibrium and are drawn on the floor, which is marked; approximate values (lower
    bounds) are hollow markers. Integer ticks on iteration axes, headroom above the largest
    value, a title per panel and one for the figure; ``log_x`` draws the x axis on a log
    scale (wall times that span decades); ``linear_y`` a linear y axis from 0 without the
    exact floor (lower bounds, where 0 means that no gain was found, not an equilibrium).
    Returns the figure."""
    import textwrap

    from matplotlib.ticker import MaxNLocator, NullFormatter

    cols = min(3, len(panels))
    rows = -(-len(panels) // cols)
    panels = distinct_colours(panels)
    labels = list(dict.fromkeys(label for _, curves in panels for label, *_ in curves))
    entries = max(len(curves) for _, curves in panels)
    below = entries > LEGEND_IN_PANEL
    width = 5.2 * cols
    ncol = max(1, min(4, int(width / (0.065 * max(map(len, labels)) + 0.9))))
    legend_rows = -(-len(labels) // ncol) if below else 0
    legend_in = 0.17 * legend_rows + 0.1  # inches the legend below the panels takes
    height = 3.9 * rows + 0.5 + (legend_in if below else 0)
    fig, axes = new_figure(width, height, rows, cols, squeeze=False)
    for k, (game, curves) in enumerate(panels):
        ax = axes[k // cols, k % cols]
        _draw_curves(ax, curves, linear_y)
        ax.set_title(plain_text(game), fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if integer_x:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if log_x:
            ax.set_xscale("log")
            ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels overlap
        if not below:
            add_legend(ax, fontsize=7)
    for k in range(len(panels), rows * cols):
        axes[k // cols, k % cols].set_visible(False)
    fig.suptitle("\n".join(textwrap.wrap(title, int(10 * 5.2 * cols))), fontsize=11)
    if below:
        legend: dict[str, object] = {}  # every panel's entries, once each, in order of first use
        for ax in axes.flat:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                legend.setdefault(label, handle)
        fig.legend(list(legend.values()), list(legend), loc="lower center", fontsize=7,
                   ncol=ncol, bbox_to_anchor=(0.5, 0.0), frameon=False)
        # the legend's rows, then the axis labels (0.75 in), below the panels; the title above
        fig.subplots_adjust(bottom=(legend_in + 0.65) / height, top=1 - 0.75 / height,
                            hspace=0.5, wspace=0.3)
    save_figure(fig, path, formats, tight=not below)
    return fig


def distinct_colours(panels: list[tuple[str, list]]) -> list[tuple[str, list]]:
    """``panels`` with a colour for every curve label that has none, one colour per label in
    every panel and no two labels alike in a figure (tab10, tab20, then evenly spaced hues
    for more labels); the curves of one group's players (``group: player p``) share their
    group's colour and differ in line style."""
    from matplotlib import colormaps

    def group(label: str) -> str:
        head, sep, tail = label.rpartition(": player ")
        return head if sep and tail.isdigit() else label

    given = {c for _, curves in panels for _, _, _, *style in curves
             if style and "color" in style[0] for c in [style[0]["color"]]}
    free = list(dict.fromkeys(group(label) for _, curves in panels
                              for label, _, _, *style in curves
                              if not (style and "color" in style[0])))
    count = len(free) + len(given)
    palette = [colormaps["tab10"](i) for i in range(10)] if count <= 10 else \
        [colormaps["tab20"](i) for i in range(20)] if count <= 20 else \
        [colormaps["hsv"](i / count) for i in range(count)]
    palette = [c for c in palette if c not in given]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(free)}
    styles = ("-", "--", ":", "-.")
    out = []
    for game, curves in panels:
        drawn = []
        for label, curve, approx, *style in curves:
            if not (style and "color" in style[0]):
                _, sep, tail = label.rpartition(": player ")
                extra = {"linestyle": styles[int(tail) % 4]} if sep and tail.isdigit() else {}
                style = [{**(style[0] if style else {}), "color": colour[group(label)], **extra}]
            drawn.append((label, curve, approx, *style))
        out.append((game, drawn))
    return out


def _draw_curves(ax, curves: list, linear_y: bool = False) -> None:
    floor = 0.0 if linear_y else EXACT_FLOOR
    tops, lows = [], []
    for label, curve, approx, *given in curves:
        shown = plain_text(label)
        mean = np.maximum(curve.mean, floor)
        tops.append(float(np.nanmax(np.maximum(curve.high, curve.mean)))
                    if curve.n > 1 else float(curve.mean.max()))
        lows.append(float(mean.min()))
        if approx:
            ax.plot(curve.x, mean, linestyle="none", marker="o", markerfacecolor="none",
                    label=f"{shown} (lower bound)", **(given[0] if given else {}))
            continue
        style = {"marker": ".", "markersize": 4} if len(curve.x) <= 60 else {}
        line, = ax.plot(curve.x, mean, label=shown, linewidth=1.4,
                        **{**style, **(given[0] if given else {})})
        if curve.n > 1:  # on a log axis (no 0), a band reaching 0 is cut two decades down
            low = curve.low if linear_y else np.maximum(curve.low, mean / 100)
            ax.fill_between(curve.x, np.maximum(low, floor), np.maximum(curve.high, floor),
                            color=line.get_color(), alpha=0.2, linewidth=0)
    if linear_y:
        ax.set_ylim(0, max(max(tops, default=1.0), 1e-9) * 1.15)
        ax.grid(True, which="major", alpha=0.3)
        return
    ax.set_yscale("log")
    top = max(max(tops, default=1.0), floor * 10)
    bottom = min(lows, default=floor)
    if bottom <= floor:
        ax.axhline(floor, color="0.4", linestyle=":", linewidth=1.0)
        ax.text(0.99, floor, f"exact (below {floor:g})", transform=ax.get_yaxis_transform(),
                ha="right", va="bottom", fontsize=7, color="0.3")
        bottom = floor
    ax.set_ylim(bottom / 3, top * 3)  # headroom: nothing touches the frame
    ax.grid(True, which="major", alpha=0.3)


HEATMAP_MEMBERS = 20
"""Populations larger than this have their meta-strategies drawn as a heatmap."""


def plot_mixtures(rec, path: Path, formats: tuple[str, ...] = ()):
    """Each player's meta-strategy by iteration: stacked areas for up to
    :data:`HEATMAP_MEMBERS` members, else a heatmap (iteration x member, weight as colour)."""
    from matplotlib.ticker import MaxNLocator

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
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_ylabel(f"player {p}: member")
        else:
            ax.stackplot(np.arange(len(rec.mixtures)), table.T, linewidth=0.2)
            ax.set_ylabel(f"player {p}: weight of member k")
            ax.set_ylim(0, 1)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("iteration")
        ax.set_title(f"meta-strategy, player {p}", fontsize=9)
    save_figure(fig, path, formats)
    return fig


def plot_payoffs(rec, path: Path, formats: tuple[str, ...] = ()) -> bool:
    """Player 0's payoff table as a heatmap; the final meta-strategy's support is marked by
    ticks on the axes (lines across the table when it is small), so the table stays readable
    at 200 members."""
    if rec.payoffs is None or rec.payoffs["values"].ndim != 3 or \
            not np.all(np.isfinite(rec.payoffs["values"])):  # entries not estimated
        return False
    values = rec.payoffs["values"][0]
    size = max(values.shape)
    side = min(10.0, 4.6 + size / 40)
    fig, ax = new_figure(side + 0.9, side)
    bound = float(np.abs(values).max()) or 1.0
    image = ax.imshow(values, cmap="RdBu", vmin=-bound, vmax=bound, interpolation="nearest")
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    fig.colorbar(image, ax=ax, label="player 0 payoff", shrink=0.8)
    x, y = (np.asarray(m) for m in rec.mixtures[-1])
    rows, cols = np.flatnonzero(x > 1e-6), np.flatnonzero(y > 1e-6)
    if size <= 30:
        for i in rows:
            ax.axhline(i, color="k", linewidth=1.6, alpha=0.7)
        for j in cols:
            ax.axvline(j, color="k", linewidth=1.6, alpha=0.7)
    else:
        ax.plot(np.full(len(rows), -0.5), rows, ">", color="k", markersize=6, clip_on=False)
        ax.plot(cols, np.full(len(cols), -0.5), "v", color="k", markersize=6, clip_on=False)
    ax.set_xlabel("player 1 member (marked: meta-strategy > 1e-6)")
    ax.set_ylabel("player 0 member")
    ax.set_title("final payoff table, player 0", fontsize=10)
    save_figure(fig, path, formats)
    return True


def plot_time(groups: list, path: Path, formats: tuple[str, ...] = ()) -> None:
    """Mean seconds per run in each phase (oracle, evaluation, meta-solve, exploitability and
    writing the run directory) of every group (``(label, records)``), stacked."""
    labels = [label for label, _ in groups]
    lines = sum(textwrap.fill(label, 40).count("\n") + 1 for label in labels)
    fig, ax = new_figure(8, 1.6 + 0.28 * lines + 0.1 * len(groups))
    left = np.zeros(len(groups))
    for field in TIME_FIELDS:
        vals = np.array([np.mean([sum(r.get(field) or 0.0 for r in rec.metrics)
                                  for rec in records]) for _, records in groups])
        ax.barh(np.arange(len(groups)), vals, left=left, label=field[:-2])
        left += vals
    ax.set_yticks(np.arange(len(groups)),
                  [plain_text(textwrap.fill(label, 40)) for label in labels], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per run (mean over the group's runs)")
    ax.set_title("where the time went", fontsize=10)
    add_legend(ax, fontsize=7, ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.08))
    save_figure(fig, path, formats)
