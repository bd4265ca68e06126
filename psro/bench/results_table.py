"""The results table of a suite's report: one row per game and method (and reference line),
written into ``report.md`` and as ``results.csv`` and ``results.tex`` (booktabs)."""

from __future__ import annotations

import csv
import io
import math

from psro.reports.tables import _tex_escape, number_text

COLUMNS = ("game", "tier", "method", "seeds", "exploitability_quarter", "half_quarter",
           "exploitability_final", "half_final", "env_steps", "thresholds", "elo")
"""The columns of ``results.csv``."""


def table_row(game: dict, method: str, seeds: str, quarter: tuple[float, float],
              final: tuple[float, float], thresholds: str, env_steps: float = math.nan,
              elo: float = math.nan) -> dict:
    """One row: ``quarter`` and ``final`` are (mean, 95% half-width) of the exploitability at
    a quarter of the budget and at its end (NaN where not measured)."""
    return {"game": game["label"], "tier": game["tier"], "method": method, "seeds": seeds,
            "exploitability_quarter": quarter[0], "half_quarter": quarter[1],
            "exploitability_final": final[0], "half_final": final[1], "env_steps": env_steps,
            "thresholds": thresholds, "elo": elo}


def cell(value: float, spec: str) -> str:
    """A number formatted by ``spec``, ``-`` for NaN."""
    return "-" if math.isnan(value) else format(value, spec)


def csv_text(rows: list[dict]) -> str:
    """``results.csv``: every column, every digit."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(COLUMNS), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def tex_text(rows: list[dict]) -> str:
    """``results.tex``: game, method, seeds, final exploitability and env steps (booktabs)."""
    lines = [r"\begin{tabular}{lllrr}", r"\toprule",
             r"Game & Method & Seeds & Exploitability & Env.\ steps \\", r"\midrule"]
    game = None
    for r in rows:
        if game is not None and r["game"] != game:
            lines.append(r"\midrule")
        value = number_text(r["exploitability_final"], r["half_final"], True).replace(
            "+-", r"$\pm$").replace("<", "$<$")
        steps = "--" if math.isnan(r["env_steps"]) else f"{r['env_steps']:,.0f}"
        lines.append(" & ".join([_tex_escape(r["game"]) if r["game"] != game else "",
                                 _tex_escape(r["method"]), _tex_escape(r["seeds"]), value,
                                 steps]) + r" \\")
        game = r["game"]
    return "\n".join(lines + [r"\bottomrule", r"\end{tabular}", ""])
