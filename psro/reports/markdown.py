"""The Markdown of ``psro report``: the summary (final figures per game and method, the runs
and what made them) and, where asked for, a section per run (its settings, where its time
went, its iterations, and the ratings of its population as a table)."""

from __future__ import annotations

import json

from psro.metrics_row import TIMING_FIELDS as TIME_FIELDS
from psro.reports.tables import number_text, seeds_text
from psro.storage import provenance


def _fmt(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def approximate(group) -> bool:
    """Whether any run of the group reports an approximate (lower-bound) exploitability."""
    return any(r.get("exploitability_kind") == "approximate_lower_bound"
               for rec in group.records for r in rec.metrics)


def summary(run_groups: list, rows: list[dict]) -> list[str]:
    """The report's first part: the final table, the runs with their provenance."""
    md = ["# PSRO report", "", "Final figures per game and method: mean +- 95% Student-t "
          "half-width over each group's distinct runs (seeds that gave identical runs count "
          "once); exploitability below 1e-10 is float noise around an exact equilibrium, "
          "written `< 1e-10` (`table.csv` keeps every digit; `table.tex` for papers).", "",
          "| game | method | seeds | iterations | final exploitability | kind | "
          "wall time (s) | env steps |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        its = f"{row['iterations_min']}" if row["iterations_min"] == row["iterations_max"] \
            else f"{row['iterations_min']}-{row['iterations_max']}"
        md.append(f"| {row['game']} | {row['group']} | {seeds_text(row)} | {its} | "
                  f"{_pm(row, 'exploitability', True)} | {row['exploitability_kind']} | "
                  f"{_pm(row, 'wall_time_s')} | {_pm(row, 'env_steps')} |")
    md += ["", "| run | game | method | seed | directory | made with |",
           "| --- | --- | --- | --- | --- | --- |"]
    made = []
    for g in run_groups:
        for rec in g.records:
            record = rec.provenance
            if record not in made:
                made.append(record)
            md.append(f"| {rec.name} | {g.game} | {g.label} | {rec.config.get('seed')} | "
                      f"`{rec.path}` | [{made.index(record) + 1}] |")
    unended = [rec.name for g in run_groups for rec in g.records if rec.ended is False]
    if unended:
        md += ["", f"**Not ended:** {', '.join(unended)} did not end through `run()` (killed, "
               f"still running, or driven by `step()`): the figures are those of the last saved "
               f"iteration, short of the run's limits (`psro run --resume --out DIR` continues "
               f"a run)."]
    md += ["", "Made with:", ""]
    md += [f"- [{k + 1}] {provenance.summary(record)}" for k, record in enumerate(made)]
    md.append("")
    if any(approximate(g) for g in run_groups):
        md += ["Approximate exploitability (games too large to walk) is a lower bound: a "
               "trained best response's gain, estimated by Monte Carlo.", ""]
    return md


def _pm(row: dict, key: str, floor: bool = False) -> str:
    return number_text(row[key], row[f"{key}_half_width"], floor)


def run_section(rec, own: list, rating: dict | None) -> list[str]:
    """One run's section: settings, time spent, iterations, ratings and its figures."""
    md = [f"## Run {rec.name}: {rec.label}", "", f"Directory: `{rec.path}`", "",
          f"Made with: {provenance.summary(rec.provenance)}", "", "Config:", "",
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
        md += ratings_table(rating)
    for title, file in own:
        md += [f"### {title}", "", f"![{title}]({file})", ""]
    return md


def ratings_table(rating: dict) -> list[str]:
    """Elo and Nash-averaging ratings as a table, one row per population member."""
    size = max(len(rating["elo_p0"]), len(rating["elo_p1"]))
    md = ["Ratings of the population (Elo from the cross-seat results; Nash averaging against "
          "the other seat's maximum-entropy Nash):", "",
          "| member | Elo, player 0 | Nash averaging, player 0 | Elo, player 1 | "
          "Nash averaging, player 1 |", "| --- | --- | --- | --- | --- |"]
    for k in range(size):
        cells = []
        for p in (0, 1):
            elo, nash = rating[f"elo_p{p}"], rating[f"nash_p{p}"]
            cells += [f"{elo[k]:.0f}", f"{nash[k]:.3g}"] if k < len(elo) else ["", ""]
        md.append(f"| {k} | " + " | ".join(cells) + " |")
    md.append("")
    return md
