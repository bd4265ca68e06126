"""Evaluators: fill the payoff table for new members and measure a meta-policy's
exploitability.

An evaluator has

- ``name``: ``"exact"`` or ``"sampled"`` (recorded in the run directory);
- ``measures_exploitability``: whether every iteration's row holds the meta-policy's
  exploitability (a target exploitability can end the run only then);
- ``initial_members()``: iteration 0's population, one uniform member per player;
- ``extend(table, populations, backend) -> int``: evaluate the profiles that are new since
  ``table`` was last grown, grow it, and return how many entries were evaluated;
- ``exact_entries``: whether the payoff table's entries are exact (then the loop adds each
  new member's response gain to the row);
- ``columns(num_players) -> tuple[str, ...]``: every key its metrics may hold (the
  row's evaluator columns, :mod:`psro.metrics_row`);
- ``measure(populations, mixtures, table) -> dict``: the metrics of the meta-policy (the same
  keys every iteration);
- ``finish(state, backend) -> dict | None``: metrics that are measured once, when a run stops,
  to update its last row (the sampled lower bound), or None;
- optionally ``during(state, backend) -> dict | None``: metrics measured after an iteration's
  meta-solve where due (the sampled lower bound every K iterations or T seconds), or None;
- optionally ``refine(state, backend) -> bool``: after a meta-solve, re-estimate entries the
  meta-strategy depends on (the sampled evaluator with ``monte_carlo.refine = "support"``);
  True when some changed, and the loop then solves the meta-game again.

:func:`make_evaluator` picks the exact one where the game's tree was walked.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from psro.backends import Backend
from psro.context import GameContext
from psro.payoffs import PayoffTable
from psro.state import RunState


class Evaluator(Protocol):
    """Fills the payoff table and measures the meta-policy (exactly or by sampling)."""

    name: str
    measures_exploitability: bool
    exact_entries: bool

    def columns(self, num_players: int) -> tuple[str, ...]:
        """Every key that :meth:`measure`, :meth:`finish` and ``during`` may write."""

    def initial_members(self) -> list:
        """Iteration 0's members, one per player."""

    def extend(self, table: PayoffTable, populations: list[list], backend: Backend) -> int:
        """Fill the payoff-table entries of new members; returns how many were evaluated."""

    def measure(self, populations: list[list], mixtures: list[np.ndarray],
                table: PayoffTable) -> dict:
        """The metrics of the meta-policy (values, gains, exploitability where measured)."""

    def finish(self, state: RunState, backend: Backend) -> dict | None:
        """Metrics measured once when the run stops (None: nothing to add)."""


SETTINGS: dict[str, tuple[str, ...]] = {"exact": (),
                                        "sampled": ("monte_carlo", "lower_bound", "seed")}
"""The RunConfig fields each evaluator reads: exact values need no options (nor a seed);
sampled ones read the Monte Carlo tolerance, when and with what best responses to measure the
approximate exploitability (``lower_bound``: their budget and PPO options; never the oracle's
``ppo`` table), and the seed of all of them."""


def make_evaluator(context: GameContext) -> Evaluator:
    """Exact (sequence-form) evaluation where the tree was walked, else sampled (Monte
    Carlo, with the approximate exploitability measured when the run stops)."""
    if context.tree is not None:
        from psro.evaluation.exact import ExactEvaluator

        return ExactEvaluator(context.tree)
    from psro.evaluation.sampled import SampledEvaluator

    return SampledEvaluator(context)


__all__ = ["SETTINGS", "Evaluator", "make_evaluator"]
