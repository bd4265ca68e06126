"""Which runs write which metrics columns, found by building the parts of a small run of every
registered algorithm with each oracle and evaluator (on Kuhn poker, where every algorithm
runs) and asking them (:meth:`psro.build.Parts.metric_columns`); the guide's table of columns
is made from it, so it lists what the code declares."""

from __future__ import annotations

from psro import algorithms
from psro.build import build_parts
from psro.config import RunConfig
from psro.errors import ConfigError, GameTooLargeError
from psro.metrics_row import pattern

PROBES = (("exact payoffs, exact oracle", {"oracle": "exact"}),
          ("exact payoffs, PPO oracle", {"oracle": "ppo"}),
          ("exact payoffs, anytime's regret-matching rounds",
           {"oracle": "ppo", "anytime_rounds": 2}),
          ("sampled payoffs", {"oracle": "ppo", "max_nodes": 10}))
"""The kinds of run probed, each with the RunConfig fields that make it (a run an algorithm
refuses is skipped)."""


def column_writers(game: str = "kuhn_poker") -> dict[str, list[str]]:
    """Each column pattern (``gain_p*``), in row order, and the runs that write it: ``every
    run``, or the algorithms and kinds of run (``xdo``, ``sampled payoffs``) that add it."""
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for name in algorithms.names():
        for kind, fields in PROBES:
            try:
                parts = build_parts(RunConfig(game=game, algorithm=name, **fields).validate())
            except (ConfigError, GameTooLargeError):
                continue
            found[(name, kind)] = tuple(dict.fromkeys(map(pattern, parts.metric_columns())))
    order: list[str] = []
    for columns in found.values():  # each new column just after the one before it in a row
        for i, column in enumerate(columns):
            if column not in order:
                order.insert(order.index(columns[i - 1]) + 1 if i else 0, column)
    writers: dict[str, list[str]] = {}
    for column in order:
        having = [key for key, columns in found.items() if column in columns]
        if len(having) == len(found):
            writers[column] = ["every run"]
            continue
        by_kind = [kind for kind, _ in PROBES if all(
            column in c for (_, k), c in found.items() if k == kind)]
        by_name = [name for name in dict.fromkeys(n for n, _ in found) if all(
            column in c for (n, _), c in found.items() if n == name)]
        rest = [f"{n} ({k})" for n, k in having if n not in by_name and k not in by_kind]
        by_name = [n for n in by_name if any(k not in by_kind for m, k in found if m == n)]
        writers[column] = by_name + by_kind + rest
    return writers


__all__ = ["PROBES", "column_writers"]
