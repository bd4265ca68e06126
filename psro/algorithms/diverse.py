"""Diverse PSRO (Perez-Nieves et al. 2021, "Modelling Behavioural Diversity for Learning in
Open-Ended Games"): PSRO whose best responses also make their population more diverse.

Each player's population is described by its members' payoff rows in the payoff table
(``M[i, j]``: member i's payoff against opponent member j), and its diversity by the expected
cardinality of the determinantal point process with kernel ``M M^T``
(:func:`solvers.expected_cardinality`). Player p's new member maximises

    ``sum_j w_j r_j / s + diversity * E|Y|([M; r] / s)``

over its payoff row ``r`` (``w`` the opponent's meta-strategy, ``s`` the game's largest
absolute payoff, ``diversity`` the weight, ``--diversity``): its return against the
meta-strategy, plus a reward for a row unlike the population's. The meta-strategy is the
meta-solver's, as in ``psro``. The oracle weighs the term (capability ``"diversity"``): the
PPO oracle by policy gradient with per-opponent reward weights (:func:`psro.rl.ppo.train`),
the exact oracle in two-player normal-form games by scoring every pure strategy (an
extensive-form exact best response cannot weigh it, and is refused).
"""

from __future__ import annotations

from collections.abc import Callable

from psro import oracles
from psro.algorithms.base import AlgorithmEntry, PSROAlgorithm
from psro.context import GameContext
from psro.errors import ConfigError
from psro.oracles.spec import SCRATCH, DiversityTerm, Target
from psro.payoffs import utility_scale
from psro.state import RunState
from solvers.diversity import population_rows

DEFAULT_WEIGHT = 1.0
"""The diversity weight when ``diversity`` is not set."""


class DiversePSRO(PSROAlgorithm):
    """PSRO with Diverse PSRO's best-response objective (module docstring)."""

    name = "diverse"

    def __init__(self, meta_solver: Callable, solver_name: str, weight: float, scale: float):
        super().__init__(meta_solver, solver_name)
        self.weight, self.scale = weight, scale

    def targets(self, state: RunState) -> list[Target]:
        """One target per player against the meta-strategy, with the diversity term of the
        player's payoff rows; a trained response starts from a new network (warm-started from
        the newest member it would start on a copy of a member, which the term's gradient can
        hold it at)."""
        table = state.table.as_game()
        return [Target(p, tuple(state.mixtures), start=SCRATCH,
                       diversity=DiversityTerm(self.weight, population_rows(table, p),
                                               self.scale))
                for p in range(len(state.mixtures))]


def _factory(context: GameContext, meta_solver: Callable) -> DiversePSRO:
    config = context.config
    entry = oracles.get(config.oracle)
    if "exact" in entry.capabilities and context.game.payoffs is None:
        raise ConfigError(f"algorithm 'diverse' cannot use oracle {config.oracle!r} on "
                          f"{config.game!r}: an exact best response in an extensive-form game "
                          f"is a backward pass that cannot weigh the population's payoff "
                          f"rows; use --oracle ppo (the exact oracle weighs the term in "
                          f"normal-form games only)")
    weight = DEFAULT_WEIGHT if config.diversity is None else config.diversity
    return DiversePSRO(meta_solver, config.meta_solver, weight,
                       utility_scale(context.game.pyspiel_game))


ENTRY = AlgorithmEntry(
    _factory, settings=("diversity",), players=2,
    needs=lambda config, walked: frozenset({"diversity"}),
    because=lambda config, walked: " (Diverse PSRO's objective)",
    reads_table=lambda config: True)  # the objective's payoff rows, whatever the meta-solver
"""The registry entry of ``diverse``."""
