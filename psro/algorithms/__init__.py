"""PSRO variants (``--algorithm``): what the meta-strategy is and which best responses to train.

An algorithm has ``name`` and four methods on the run's state:

- ``meta(state) -> mixtures``: the meta-strategy, one 1-D mixture per player (what the
  opponents of the next best responses play, and what exploitability measures);
- ``targets(state) -> [Target]``: the best responses to train next
  (:class:`psro.oracles.Target`: a player and the opponents' weights it trains against);
- ``expand(state) -> [member]``: members the algorithm adds itself before evaluation (XDO's
  restricted-game equilibrium; none for the others);
- ``stop(state) -> str | None``: a stop reason of its own (XDO: ``restricted_game_complete``);

and two optional ones (:class:`Algorithm` has the defaults): ``admit(state, members) ->
members``, which of the oracle's new members join (JPSRO drops duplicates), and
``metrics(state) -> dict``, columns of its own in the metrics row (JPSRO's ``gap``).

Built in:

- ``psro``: the meta-solver's mixture; one best response per player against it.
- ``anytime`` (anytime double oracle / Anytime PSRO, McAleer et al. 2022): the meta-strategy
  is, for each player, the mixture of its population that is least exploitable in the full
  game, found exactly as one linear program in the sequence form (the opponent's best-response
  value is the optimum of the sequence-form dual, linear in the mixture), so exploitability
  never rises from one iteration to the next (the simplex only grows). The population grows as
  in double oracle: one best response per player against the meta-solver's mixture of the
  restricted game (default ``nash``). Training against the least exploitable mixture instead
  can stall (on Kuhn poker it stops improving at exploitability 0.19 after a few iterations,
  the new best responses being ones the population holds). Two-player zero-sum games. Where
  the game is too large to walk (or ``anytime_rounds`` is set), with the PPO oracle, the
  mixture is found by regret matching against the trained best responses instead
  (:mod:`psro.algorithms.anytime_rm`).
- ``rectified`` (PSRO-rN, Balduzzi et al. 2019, as OpenSpiel's ``rectifier="rectified"``):
  the meta-solver's Nash mixture; for each member ``k`` of player p in its support, one best
  response of p against the opponents' members that ``k`` beats or ties
  (``u_p(k, j) >= (u_p(k, j) + u_q(k, j)) / 2``, i.e. ``u_p(k, j) >= 0`` in zero-sum games),
  weighted by their Nash weights (all of them where that weight is zero). Two-player games, the
  ``nash`` meta-solver.
- ``xdo``: extensive-form double oracle, :mod:`psro.algorithms.xdo`.
- ``jpsro``: joint PSRO for n-player general-sum games, :mod:`psro.algorithms.jpsro`.
- ``pipeline``: pipeline PSRO, K PPO learners per player at once, :mod:`psro.algorithms.pipeline`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

import solvers
from psro.context import GameContext
from psro.errors import ConfigError, MetaSolverError
from psro.evaluation.exact import PlanStack
from psro.extensive_form.sequence_form import SequenceFormGame, dual_matrix, payoff_matrix
from psro.oracles import Target, plain_targets
from psro.state import RunState

SUPPORT_TOL = 1e-9
"""Weights above this are in a mixture's support."""


class Algorithm:
    """Base of the variants: by default an algorithm adds no members of its own, admits every
    best response, has no metrics and no stop reason of its own."""

    def expand(self, state: RunState) -> list:
        """Members the algorithm itself adds before evaluation (none)."""
        return []

    def admit(self, state: RunState, members: list) -> list:
        """Which of the oracle's new members join the populations (all)."""
        return members

    def metrics(self, state: RunState) -> dict:
        """Metrics of the algorithm's own for the iteration's row (none)."""
        return {}

    def stop(self, state: RunState) -> str | None:
        """A stop reason of the algorithm's own (none)."""
        return None


class PSROAlgorithm(Algorithm):
    """Vanilla PSRO: the meta-solver's mixture; one best response per player against it."""

    name = "psro"

    def __init__(self, meta_solver: Callable, solver_name: str):
        self.meta_solver, self.solver_name = meta_solver, solver_name

    def meta(self, state: RunState) -> list[np.ndarray]:
        """The meta-solver's mixtures on the payoff table."""
        try:
            mixtures = self.meta_solver(state.table.as_game())
            return solvers.as_mixtures(mixtures, state.table.shape)
        except (solvers.SolverError, solvers.PayoffError) as err:
            raise MetaSolverError(f"meta-solver {self.solver_name!r} failed at iteration "
                                  f"{state.iteration}: {err} (the previous iteration's "
                                  f"checkpoint is kept)") from None

    def targets(self, state: RunState) -> list[Target]:
        """One target per player: the meta-strategy."""
        return plain_targets(state.mixtures)


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


def _psro(context: GameContext, meta_solver: Callable) -> PSROAlgorithm:
    return PSROAlgorithm(meta_solver, context.config.meta_solver)


def _rectified(context: GameContext, meta_solver: Callable) -> RectifiedAlgorithm:
    if context.num_players != 2:
        raise ConfigError(f"algorithm 'rectified' needs a two-player game; "
                          f"{context.config.game!r} has {context.num_players} players")
    if context.config.meta_solver != "nash":
        raise ConfigError(f"algorithm 'rectified' rectifies a Nash meta-strategy; use "
                          f"meta_solver 'nash' (got {context.config.meta_solver!r}); the "
                          f"'rectified' meta-solver is the one-response-per-player heuristic")
    return RectifiedAlgorithm(meta_solver, context.config.meta_solver)


def _anytime(context: GameContext, meta_solver: Callable):
    config = context.config
    if context.num_players != 2 or not context.game.zero_sum:
        raise ConfigError(f"algorithm 'anytime' needs a two-player zero-sum game; "
                          f"{config.game!r} is not one")
    if config.anytime_rounds is None and context.tree is not None:
        return AnytimeAlgorithm(context.tree, PSROAlgorithm(meta_solver, config.meta_solver))
    if config.oracle != "ppo":
        where = "anytime_rounds is set" if context.tree is not None else \
            f"the game is too large to walk ({context.walk_error})"
        raise ConfigError(f"algorithm 'anytime' finds the least exploitable mixture by regret "
                          f"matching against PPO best responses where {where}: use --oracle "
                          f"ppo (with the exact oracle it solves one LP; leave anytime_rounds "
                          f"unset)")
    from psro.algorithms.anytime_rm import DEFAULT_ROUNDS, RegretMatchingAnytime

    return RegretMatchingAnytime(config.anytime_rounds or DEFAULT_ROUNDS)


def _xdo(context: GameContext, meta_solver: Callable):
    from psro.algorithms.xdo import XDOAlgorithm

    return XDOAlgorithm(context.require_tree("algorithm 'xdo' (its restricted game is the "
                                             "walked tree)"),
                        zero_sum=context.game.zero_sum)


def _jpsro(context: GameContext, meta_solver: Callable):
    from psro.algorithms.jpsro import JPSROAlgorithm

    config = context.config
    return JPSROAlgorithm(context.require_tree("algorithm 'jpsro' (its gap is measured on "
                                               "the walked tree)"),
                          solvers.get_joint(config.meta_solver, **config.meta_solver_options),
                          config.meta_solver, exact_oracle=config.oracle == "exact")


def _pipeline(context: GameContext, meta_solver: Callable):
    from psro.algorithms.pipeline import PipelineAlgorithm
    from psro.rl.config import PPOConfig

    config = context.config
    if config.oracle != "ppo":
        raise ConfigError(f"algorithm 'pipeline' trains PPO learners in chunks until they "
                          f"plateau; the {config.oracle!r} oracle does not (exact best "
                          f"responses neither train nor plateau): use --oracle ppo")
    ppo = PPOConfig.from_dict(config.ppo)
    if not ppo.warm_start:
        raise ConfigError("algorithm 'pipeline' continues each learner from its network: "
                          "ppo.warm_start must be true")
    return PipelineAlgorithm(meta_solver, config.meta_solver, config.pipeline_width,
                             ppo.env_steps)


@dataclass(frozen=True)
class AlgorithmEntry:
    """A registered algorithm: ``factory(context, meta_solver) -> algorithm``, and what it
    reads of the run's settings, so that a setting it ignores is refused rather than silently
    dropped (:func:`psro.build.build_parts`).

    ``meta_solver``: the kind of meta-solver it calls, ``"mixtures"`` (``solvers.get``: one
    mixture per player), ``"joint"`` (``solvers.get_joint``) or None (it reads no meta-solver,
    and ``meta_solver``/``meta_solver_options`` are refused); ``default_meta_solver`` the one
    used when none is given. ``settings``: the RunConfig fields of its own it reads
    (``pipeline_width``, ``anytime_rounds``), and ``more(config, evaluation)`` those it reads
    only in some runs; ``why``: what it does instead of reading a meta-solver, for the
    refusal."""

    factory: Callable
    meta_solver: str | None = "mixtures"
    default_meta_solver: str | None = "nash"
    settings: tuple[str, ...] = ()
    why: str = ""
    more: Callable = lambda config, evaluation: ()


def _anytime_reads(config, evaluation: str) -> tuple[str, ...]:
    """Anytime by regret matching (rounds set, or a game too large to walk) estimates each
    round's member values by Monte Carlo."""
    return ("monte_carlo", "seed") \
        if config.anytime_rounds is not None or evaluation == "sampled" else ()


ALGORITHM_SETTINGS = ("pipeline_width", "anytime_rounds")
"""RunConfig fields that only some algorithms read (each declares which, in ``settings``)."""

ALGORITHMS: dict[str, AlgorithmEntry] = {
    "psro": AlgorithmEntry(_psro),
    "anytime": AlgorithmEntry(_anytime, settings=("anytime_rounds",), more=_anytime_reads),
    "rectified": AlgorithmEntry(_rectified),
    "xdo": AlgorithmEntry(_xdo, meta_solver=None, default_meta_solver=None,
                          why="it puts all the meta-weight on its restricted game's "
                              "equilibrium"),
    "jpsro": AlgorithmEntry(_jpsro, meta_solver="joint", default_meta_solver="cce"),
    "pipeline": AlgorithmEntry(_pipeline, settings=("pipeline_width",)),
}
"""The algorithms by name."""


def get(name: str) -> AlgorithmEntry:
    """The registry entry of algorithm ``name``; :class:`ConfigError` listing the names."""
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; accepted: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def names() -> tuple[str, ...]:
    """Every registered algorithm name."""
    return tuple(ALGORITHMS)


def build(context: GameContext, meta_solver: Callable | None):
    """The run's algorithm (``context.config.algorithm``); :class:`ConfigError` for an
    unknown name or a game or setting it cannot handle, before any work."""
    return get(context.config.algorithm).factory(context, meta_solver)
