"""The columns of a run's metrics rows, declared before the first row is made.

A row (one per iteration: ``PSRO.metrics``, ``metrics.jsonl``, ``metrics.csv``, the records)
holds, in this order:

- ``iteration``, ``wall_time_s`` (real time since the run began, writing and measuring
  included), ``population_size``;
- the evaluator's columns (:meth:`~psro.evaluation.Evaluator.columns`: exploitability and its
  parts, and what a sampled evaluator adds);
- the algorithm's own columns (``Algorithm.columns``: XDO's ``restricted_actions``, JPSRO's
  ``gap``);
- ``diversity_p{p}``; ``response_gain_p{p}`` where payoffs are exact;
- ``entries_evaluated``, ``env_steps`` and the seconds of each phase (:data:`TIMING_FIELDS`).

Every row has every column; a value that does not apply to a row is None (an empty CSV cell),
e.g. ``response_gain_p*`` at iteration 0, which has no response yet.
"""

from __future__ import annotations

from collections.abc import Iterable

TIMING_FIELDS = ("oracle_s", "evaluation_s", "meta_solver_s", "exploitability_s", "write_s")
"""Seconds per iteration in each phase; ``write_s`` is the time spent writing the run
directory after the previous iteration (a row is written after it is made)."""

MEASURED_COLUMNS = ("exploitability", "nash_conv", "exploitability_kind")
"""The first columns every evaluator declares (then its ``gain_p*`` and ``value_p*``)."""
LEADING = ("iteration", "wall_time_s", "population_size")
"""The first columns of every row."""
TRAILING = ("entries_evaluated", "env_steps", *TIMING_FIELDS)
"""The last columns of every row."""


MEANINGS = {
    "iteration": "the iteration (0: the initial uniform population)",
    "wall_time_s": "real time since the run began, summed over resumes: every phase, writing "
                   "the run directory and the final measurement included",
    "population_size": "player 0's population size",
    "exploitability": "the meta-policy's exploitability (NashConv / players); empty where not "
                      "measured in this row",
    "nash_conv": "the meta-policy's NashConv (the sum of the players' gains)",
    "exploitability_kind": "`exact`, `approximate_lower_bound` (a PPO best response's gain) "
                           "or `not_measured`",
    "gain_p*": "what a best response gains for player p over the meta-policy's value",
    "value_p*": "player p's value of the meta-policy",
    "meta_game_nash_conv": "the meta-policy's NashConv within the populations (sampled payoffs)",
    "gain_std_err_p*": "the standard error of the lower bound's `gain_p*`",
    "exploitability_half_width": "the 95% half-width of the lower bound's exploitability",
    "payoff_episodes": "episodes this iteration spent on payoff entries",
    "restricted_actions": "the (information set, action) pairs XDO's restricted game allows",
    "restricted_value_p*": "anytime PSRO's regret-matching rounds: player p's mean estimated "
                           "value of its restricted mixture",
    "round_episodes_p*": "episodes those rounds simulated to estimate player p's members",
    "gap": "JPSRO's exact (C)CE gap of the joint in the full game",
    "gap_kind": "`cce` or `ce`: which gap `gap` is",
    "gap_p*": "player p's part of the gap",
    "diversity_p*": "player p's population diversity: the DPP expected cardinality of its "
                    "payoff rows",
    "response_gain_p*": "exact payoffs: what the iteration's new best response of player p "
                        "gained against the previous meta-strategy (empty at iteration 0)",
    "entries_evaluated": "payoff-table entries evaluated this iteration",
    "env_steps": "environment steps of every best response so far",
    "oracle_s": "seconds training best responses",
    "evaluation_s": "seconds evaluating payoff entries",
    "meta_solver_s": "seconds in the meta-solver",
    "exploitability_s": "seconds measuring the meta-policy (the final measurement included)",
    "write_s": "seconds writing the previous iteration's files",
}
"""What each column holds (``_p*``: one column per player); the guide's table of columns is
made from it and from the parts' declarations."""


def pattern(column: str) -> str:
    """A column's name with its player index as ``*`` (``gain_p1`` -> ``gain_p*``)."""
    head, sep, tail = column.rpartition("_p")
    return f"{head}_p*" if sep and tail.isdigit() else column


def per_player(prefix: str, num_players: int) -> tuple[str, ...]:
    """``prefix0, prefix1, ...``: one column per player."""
    return tuple(f"{prefix}{p}" for p in range(num_players))


def row_columns(num_players: int, evaluator: Iterable[str], algorithm: Iterable[str],
                exact_entries: bool) -> tuple[str, ...]:
    """Every column of a run's metrics rows, in order (see the module): ``evaluator`` and
    ``algorithm`` are the columns those parts declare; ``exact_entries`` adds the response
    gains, measured on exact payoff tables only."""
    gains = per_player("response_gain_p", num_players) if exact_entries else ()
    return tuple(dict.fromkeys((*LEADING, *evaluator, *algorithm,
                                *per_player("diversity_p", num_players), *gains, *TRAILING)))


def merged_columns(declared: Iterable[str], rows: Iterable[dict]) -> tuple[str, ...]:
    """``declared`` followed by any key of ``rows`` it lacks, in the order they first appear
    (the columns of a run written before rows declared theirs, or by another version)."""
    columns = dict.fromkeys(declared)
    for row in rows:
        columns.update(dict.fromkeys(row))
    return tuple(columns)


__all__ = ["LEADING", "MEANINGS", "MEASURED_COLUMNS", "TIMING_FIELDS", "TRAILING", "merged_columns",
           "pattern", "per_player", "row_columns"]
