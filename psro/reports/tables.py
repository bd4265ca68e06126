"""The tables of ``psro report``: the final figures per group as CSV (full precision) and as a
LaTeX ``tabular`` for papers (booktabs; one block of rows per game, exploitability below
:data:`psro.reports.groups.EXACT_FLOOR` written as exact), and the aggregated curves as CSV."""

from __future__ import annotations

import csv
import io
import math

from psro.reports.groups import EXACT_FLOOR, Curve

TABLE_COLUMNS = ("game", "group", "seeds", "distinct", "iterations_min", "iterations_max",
                 "exploitability", "exploitability_half_width", "wall_time_s",
                 "wall_time_s_half_width", "env_steps", "env_steps_half_width",
                 "exploitability_kind")
"""The columns of ``table.csv`` (:func:`psro.reports.groups.final_table`'s rows)."""


def curve_columns(x_key: str) -> tuple[str, ...]:
    """The columns of ``curves_<x_key>.csv``: ``game, group, <x_key>, mean, low, high,
    seeds`` (``low`` and ``high`` bound the 95% interval, empty with one distinct run;
    ``seeds`` is the number of distinct runs averaged)."""
    return ("game", "group", x_key, "mean", "low", "high", "seeds")


def table_csv(rows: list[dict]) -> str:
    """The final table as CSV under :data:`TABLE_COLUMNS` (numbers with full precision)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _number(value: float) -> str:
    return "" if math.isnan(value) else repr(float(value))


def curves_csv(curves: dict[tuple[str, str], Curve], x_key: str) -> str:
    """Aggregated curves as CSV under :func:`curve_columns`, one row per point, keyed by
    (game, group label); iterations are integers."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(curve_columns(x_key))
    for (game, label), curve in curves.items():
        for x, m, lo, hi in zip(curve.x, curve.mean, curve.low, curve.high, strict=True):
            shown = str(int(x)) if x_key == "iteration" else repr(float(x))
            writer.writerow([game, label, shown, repr(float(m)), _number(lo), _number(hi),
                             curve.n])
    return buffer.getvalue()


def _tex_escape(text: str) -> str:
    special = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
               "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
               "^": r"\textasciicircum{}"}
    return "".join(special.get(c, c) for c in text)


def _tex_number(mean: float, half: float, floor: bool = False) -> str:
    if math.isnan(mean):
        return "--"
    if floor and mean < EXACT_FLOOR and (math.isnan(half) or mean + half < EXACT_FLOOR):
        return f"$< 10^{{{round(math.log10(EXACT_FLOOR))}}}$"
    text = f"{mean:,.0f}" if abs(mean) >= 1000 else f"{mean:.4g}"
    if math.isnan(half) or half == 0:
        return text
    return f"{text} $\\pm$ {half:,.0f}" if abs(mean) >= 1000 else f"{text} $\\pm$ {half:.2g}"


def number_text(mean: float, half: float, floor: bool = False) -> str:
    """A mean and its half-width for Markdown: ``0.125 +- 0.01``, ``< 1e-10`` below the exact
    floor (with ``floor``), ``n/a`` for NaN."""
    if math.isnan(mean):
        return "n/a"
    if floor and mean < EXACT_FLOOR and (math.isnan(half) or mean + half < EXACT_FLOOR):
        return f"< {EXACT_FLOOR:g}"
    if math.isnan(half) or half == 0:
        return f"{mean:.6g}"
    return f"{mean:.6g} +- {half:.2g}"


def seeds_text(row: dict) -> str:
    """``3``, or ``3 (1 distinct)`` where seeds gave identical runs."""
    return str(row["seeds"]) if row["distinct"] == row["seeds"] else \
        f"{row['seeds']} ({row['distinct']} distinct)"


def table_tex(rows: list[dict]) -> str:
    """The final table as a LaTeX ``tabular`` with booktabs rules (``\\usepackage{booktabs}``):
    game, method, seeds, iterations, final exploitability, wall time and environment steps,
    each as mean +- 95% half-width over the distinct runs; a rule between games."""
    lines = [r"\begin{tabular}{llrrrrr}", r"\toprule",
             r"Game & Method & Seeds & Iterations & Exploitability & Wall time (s) & "
             r"Env.\ steps \\", r"\midrule"]
    game = None
    for row in rows:
        if game is not None and row["game"] != game:
            lines.append(r"\midrule")
        its = str(row["iterations_min"]) if row["iterations_min"] == row["iterations_max"] \
            else f"{row['iterations_min']}--{row['iterations_max']}"
        cells = [_tex_escape(row["game"]) if row["game"] != game else "",
                 _tex_escape(row["group"]), seeds_text(row), its,
                 _tex_number(row["exploitability"], row["exploitability_half_width"], True),
                 _tex_number(row["wall_time_s"], row["wall_time_s_half_width"]),
                 _tex_number(row["env_steps"], row["env_steps_half_width"])]
        lines.append(" & ".join(cells) + r" \\")
        game = row["game"]
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)
