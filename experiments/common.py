"""Shared helpers for the experiment scripts: run a set of configurations into run
directories, draw their exploitability curves in one figure, and write a report."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import psro  # noqa: E402
from psro.reports import write_report  # noqa: E402
from psro.reports.figures import new_figure, save_figure, style_log_axis  # noqa: E402


def run_all(configs: dict[str, psro.RunConfig], out: Path, quiet: bool = False) -> dict:
    """Run each named config into ``out/name`` (resuming a finished or killed one); returns
    name -> metrics rows."""
    results = {}
    for name, config in configs.items():
        directory = out / name
        if (directory / "config.json").exists():
            run = psro.PSRO.resume(directory)
        else:
            run = psro.PSRO(config.game, config=config, out=directory)
        try:
            rows = run.run()
        except psro.MetaSolverError as err:  # e.g. a degenerate meta-game
            print(f"{name:40s} stopped: {err}", flush=True)
            rows = run.metrics
        results[name] = rows
        if not quiet:
            last = rows[-1]
            value = last["exploitability"]
            shown = "n/a" if value is None else f"{value:.4g}"
            print(f"{name:40s} iterations {last['iteration']:4d}  exploitability {shown}"
                  f" ({last['exploitability_kind']})  {last['wall_time_s']:.1f} s", flush=True)
    return results


def curves_figure(groups: dict[str, dict[str, list[dict]]], path: Path, key: str = "exploitability",
                  ylabel: str = "exploitability", x_key: str = "iteration",
                  xlabel: str = "iteration") -> None:
    """One panel per group (e.g. per game), one curve per run, log scale."""
    fig, axes = new_figure(4.6 * len(groups), 3.8, 1, len(groups), squeeze=False)
    for ax, (title, runs) in zip(axes[0], groups.items(), strict=True):
        for label, rows in runs.items():
            pts = [(r[x_key], r[key]) for r in rows if r.get(key) is not None]
            if pts:
                its, vals = zip(*pts, strict=True)
                ax.plot(its, np.maximum(vals, 1e-12), label=label, marker=".", markersize=3)
        ax.set_title(title, fontsize=9)
        style_log_axis(ax, xlabel, ylabel, legend_size=6)
    save_figure(fig, path)


def report(out: Path, names: list[str], folder: str = "report") -> Path:
    md, _ = write_report([out / n for n in names], out / folder)
    return md
