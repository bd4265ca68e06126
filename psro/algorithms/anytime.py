"""Anytime PSRO (anytime double oracle, McAleer et al. 2022): the meta-strategy is, for each
player, the mixture of its population that is least exploitable in the full game, found exactly
as one linear program in the sequence form (the opponent's best-response value is the optimum of
the sequence-form dual, linear in the mixture), so exploitability never rises from one iteration
to the next (the simplex only grows). The population grows as in double oracle: one best
response per player against the meta-solver's mixture of the restricted game (default
``nash``). Training against the least exploitable mixture instead can stall (on Kuhn poker it
stops improving at exploitability 0.19 after a few iterations, the new best responses being
ones the population holds). Two-player zero-sum games. Where the game is too large to walk (or
``anytime_rounds`` or ``anytime_episodes`` is set), the mixture is found by regret matching
against trained best responses instead (:mod:`psro.algorithms.anytime_rm`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from psro.algorithms.anytime_rm import (
    DEFAULT_ROUNDS,
    REGRET_MATCHING_SETTINGS,
    RegretMatchingAnytime,
    anytime_reads,
    asked_setting,
)
from psro.algorithms.base import Algorithm, AlgorithmEntry, PSROAlgorithm
from psro.context import GameContext
from psro.errors import MetaSolverError
from psro.evaluation.exact import PlanStack
from psro.evaluation.monte_carlo import estimate_options
from psro.extensive_form.sequence_form import SequenceFormGame, dual_matrix, payoff_matrix
from psro.oracles.spec import Target, plain_targets
from psro.state import RunState


class AnytimeAlgorithm(Algorithm):
    """Anytime PSRO: each player's least exploitable mixture of its population, by one LP per
    player on the sequence form (see the module docstring). Tolerance: HiGHS's, about 1e-9 on
    the opponent's best-response value."""

    name = "anytime"

    def __init__(self, tree: SequenceFormGame, expansion: PSROAlgorithm):
        self.tree = tree
        self.expansion = expansion
        self.stack = PlanStack(tree)
        self._dual = [dual_matrix(tree, q) for q in range(2)]
        self._payoff = [payoff_matrix(tree, 1 - q, q, q) for q in range(2)]

    def meta(self, state: RunState) -> list[np.ndarray]:
        """Each player's least exploitable mixture of its population."""
        return [self._least_exploitable(p, state.populations[p]) for p in range(2)]

    def _least_exploitable(self, p: int, members: list) -> np.ndarray:
        q = 1 - p
        plans = self.stack.plans(p, members)  # (K, S_p)
        gain = (self._payoff[q].T @ plans.T)  # (S_q, K): value of q's sequences per member
        k, dual = plans.shape[0], self._dual[q]
        a_ub = sp.hstack([sp.csr_matrix(gain), -dual]).tocsr()  # gain w - G v <= 0
        a_eq = sp.csr_matrix(np.concatenate([np.ones(k), np.zeros(dual.shape[1])])[None, :])
        cost = np.zeros(k + dual.shape[1])
        cost[k] = 1.0  # minimise v_root, q's best-response value
        bounds = [(0, None)] * k + [(None, None)] * dual.shape[1]
        result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(a_ub.shape[0]), A_eq=a_eq, b_eq=[1.0],
                         bounds=bounds, method="highs")
        if result.status != 0:
            raise MetaSolverError(f"anytime: the least-exploitable-mixture LP of player {p} "
                                  f"failed ({result.message}); the previous iteration's "
                                  f"checkpoint is kept")
        w = np.maximum(result.x[:k], 0.0)
        return w / w.sum()

    def targets(self, state: RunState) -> list[Target]:
        """One target per player: the meta-solver's mixtures on the payoff table (the
        population grows as in double oracle, which is what makes it converge)."""
        return plain_targets(self.expansion.meta(state))


def _anytime(context: GameContext, meta_solver: Callable):
    """The registry's factory: the exact LP where the game is walked and no rounds are set,
    else regret matching against trained best responses."""
    config = context.config
    if not regret_matching(config, context.tree is not None):
        return AnytimeAlgorithm(context.tree, PSROAlgorithm(meta_solver, config.meta_solver))
    return RegretMatchingAnytime(config.anytime_rounds or DEFAULT_ROUNDS,
                                round_options(config))


def round_options(config) -> dict:
    """The Monte Carlo options of each member's estimate in a regret-matching round: the
    run's ``monte_carlo`` options, or exactly ``anytime_episodes`` episodes where it is set."""
    options = estimate_options(config.monte_carlo)
    episodes = config.anytime_episodes
    if episodes is not None:
        options.update(min_episodes=episodes, max_episodes=episodes, batch=episodes)
    return options


def regret_matching(config, walked: bool) -> bool:
    """Whether anytime finds its mixture by regret matching (rounds or episodes set, or a
    game too large to walk) rather than by the exact LP."""
    return asked_setting(config) is not None or not walked


def _needs(config, walked: bool) -> frozenset[str]:
    return frozenset({"trains", "round_hook"}) if regret_matching(config, walked) \
        else frozenset()


def _because(config, walked: bool) -> str:
    where = f"{asked_setting(config)} is set" if walked else "the game is too large to walk"
    return f" (it finds the least exploitable mixture by regret matching against trained best " \
           f"responses where {where}; with an exact oracle on a walked game it solves one LP)"


ENTRY = AlgorithmEntry(_anytime, settings=REGRET_MATCHING_SETTINGS, more=anytime_reads,
                       needs=_needs, because=_because, players=2, zero_sum=True,
                       reads_table=lambda config: True)
