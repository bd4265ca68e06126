"""PSRO-rN, rectified Nash response (Balduzzi et al. 2019, as OpenSpiel's
``rectifier="rectified"``): the meta-solver's Nash mixture; for each member ``k`` of player p in
its support, one best response of p against the opponents' members that ``k`` beats or ties
(``u_p(k, j) >= (u_p(k, j) + u_q(k, j)) / 2``, i.e. ``u_p(k, j) >= 0`` in zero-sum games),
weighted by their Nash weights (all of them where that weight is zero). Two-player games, the
``nash`` meta-solver, an oracle that trains several best responses per player."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from psro.algorithms.base import SUPPORT_TOL, AlgorithmEntry, PSROAlgorithm
from psro.context import GameContext
from psro.errors import ConfigError
from psro.oracles.spec import Target
from psro.state import RunState


class RectifiedAlgorithm(PSROAlgorithm):
    """PSRO-rN: one best response per member in the Nash support, against the opponents'
    members it beats or ties (see the module docstring)."""

    name = "rectified"

    def targets(self, state: RunState) -> list[Target]:
        """One target per (player, supported member), tagged with the member's index + 1."""
        values = state.table.values
        mean = values.mean(axis=0)
        out = []
        for p in range(2):
            q = 1 - p
            for k in np.flatnonzero(state.mixtures[p] > SUPPORT_TOL):
                kept = np.take(values[p], k, axis=p) >= np.take(mean, k, axis=p) - 1e-12
                weights = state.mixtures[q] * kept
                weights = weights / weights.sum() if weights.sum() > SUPPORT_TOL \
                    else state.mixtures[q]
                mixtures = [None, None]
                mixtures[p], mixtures[q] = state.mixtures[p], weights
                out.append(Target(p, tuple(mixtures), tag=int(k) + 1))
        return out


def _rectified(context: GameContext, meta_solver: Callable) -> RectifiedAlgorithm:
    if context.config.meta_solver != "nash":
        raise ConfigError(f"algorithm 'rectified' rectifies a Nash meta-strategy; use "
                          f"meta_solver 'nash' (got {context.config.meta_solver!r}); the "
                          f"'rectified' meta-solver is the one-response-per-player heuristic")
    return RectifiedAlgorithm(meta_solver, context.config.meta_solver)


ENTRY = AlgorithmEntry(_rectified, needs=lambda config, walked: frozenset({"targets"}),
                       players=2, reads_table=lambda config: True)
