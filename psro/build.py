"""Build a run's parts from its config: the game context, the oracle (by name from the oracle
registry), the evaluator, the meta-solver, the algorithm (the PSRO variant) and the backend.
Everything that can be refused is refused here, before any work or any file is written."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import games
import solvers
from games.catalog import CATALOGUE_VERSION
from psro import algorithms, oracles
from psro.backends import Backend, make_backend, max_workers
from psro.config import RunConfig
from psro.context import GameContext
from psro.errors import ConfigError, UnreadSettingError
from psro.evaluation import SETTINGS as EVALUATOR_SETTINGS
from psro.evaluation import Evaluator, make_evaluator
from psro.metrics_row import row_columns
from psro.option_checks import TABLE_OPTIONS
from psro.oracles import CAPABILITIES
from psro.rl.config import PPOConfig
from psro.storage.tensorboard import require_tensorboard


@dataclass
class Parts:
    """What the loop calls. ``config`` is the run's config with every PPO option written out
    (so a resumed run keeps its options even if a later version changes a default)."""

    config: RunConfig
    context: GameContext
    oracle: oracles.Oracle
    evaluator: Evaluator
    meta_solver: Callable[[list[np.ndarray]], list[np.ndarray]]
    backend: Backend
    algorithm: object = None
    """The variant (:mod:`psro.algorithms`): the meta-strategy and the best responses to train."""
    deterministic: bool = False
    """No part of the run reads the seed (exact oracle, exact payoffs, no sampling): every
    seed gives the same numbers."""

    @property
    def warm_modules(self) -> tuple[str, ...]:
        """The modules the parts' tasks import (a processes backend imports them in each
        worker when it starts)."""
        parts = (self.oracle, self.evaluator)
        return tuple(dict.fromkeys([type(p).__module__ for p in parts] + [
            m for p in parts for m in getattr(p, "warm_modules", ())]))

    def metric_columns(self) -> tuple[str, ...]:
        """Every column of the run's metrics rows (:func:`psro.metrics_row.row_columns`), as
        the evaluator and the algorithm declare them (an algorithm registered without a
        ``columns`` method declares none)."""
        n = self.context.num_players
        own = getattr(self.algorithm, "columns", None)
        return row_columns(n, self.evaluator.columns(n), own(n) if own else (),
                           self.evaluator.exact_entries)

    def manifest(self) -> dict:
        """What a run directory records about how the run is played and evaluated (with
        ``game_provenance``, what a game declares of its own making: its ``provenance()``,
        e.g. the debate game's judge checksum)."""
        tree = self.context.tree
        declared = getattr(self.context.game.pyspiel_game, "provenance", None)
        return {"evaluation": self.evaluator.name, "catalogue_version": CATALOGUE_VERSION,
                "game_provenance": declared() if callable(declared) else None,
                "turn_based": self.context.play_game is not self.context.game.pyspiel_game,
                "infoset_digest": None if tree is None else tree.keys_digest(),
                "infoset_keys": None if tree is None else [p.keys for p in tree.players],
                "metric_columns": list(self.metric_columns())}


PART_SETTINGS = ("meta_solver", "meta_solver_options", "oracle_options", "ppo", "monte_carlo",
                 "lower_bound",
                 *algorithms.ALGORITHM_SETTINGS)
"""RunConfig fields that only some parts read (each part declares which it reads)."""


def build_parts(config: RunConfig, resumed: bool = False) -> Parts:
    """The parts of a run of ``config`` (validated). Raises ``ConfigError``, ``GameError`` or
    ``GameTooLargeError`` for what cannot run, and ``UnreadSettingError`` (a ``ConfigError``)
    for a setting that no part of this run reads (the algorithm, the oracle and the evaluator
    each declare theirs), so that an option is never silently ignored. With ``resumed`` (a run
    directory written by an earlier version), such settings are reset to their defaults
    instead."""
    config = config.validate()
    if config.tensorboard:
        require_tensorboard()
    entry = algorithms.get(config.algorithm)
    oracle_entry = oracles.get(config.oracle)
    if config.env_step_budget is not None:
        _check_env_steps(config.oracle)
    if entry.meta_solver is not None and config.meta_solver is None:
        config = config.merged({"meta_solver": entry.default_meta_solver})
    most = max_workers(config.backend)
    if resumed and most is not None and (config.workers or 1) > most:
        config = dataclasses.replace(config, workers=None)  # an earlier version ignored it
    backend = make_backend(config.backend, config.workers, config.ray_address)
    meta_solver = _meta_solver(config, entry.meta_solver)
    game = games.load(config.game)
    if oracle_entry.game_check is not None:  # before the walk
        oracle_entry.game_check(game)
    if meta_solver is not None and game.num_players >= 2:  # before the walk (seconds)
        _check_meta_solver(config, meta_solver, game.num_players)
    context = GameContext.build(config, oracle_entry.turn_based, game)
    _check_needs(config, entry, oracle_entry, context)
    evaluator = make_evaluator(context)
    if config.target_exploitability is not None:
        _check_target(evaluator, config.game)
    oracle = oracle_entry.factory(context)
    if "targets" in oracle_entry.capabilities and not oracles.targeted(oracle):
        raise ConfigError(f"oracle {config.oracle!r} declares the capability 'targets' but "
                          f"has no targeted_tasks and targeted_responses")
    algorithm = entry.factory(context, meta_solver)
    chosen = {k: v for k, v in getattr(algorithm, "chosen_settings", dict)().items()
              if getattr(config, k) is None}
    if chosen:  # recorded as they ran (xdo_solver: the default the game picked), not as null
        config = dataclasses.replace(config, **chosen)
    if hasattr(evaluator, "fill"):  # sampled payoffs: estimated only where something reads them
        evaluator.fill = bool(entry.reads_table(config))
        if not evaluator.fill:
            config = _without_table_options(config, resumed)
    reads = settings_read(config, evaluator.name)
    config = _without_unread(config, reads, entry, resumed)
    # options written out in full, so a resume keeps them whatever a later default
    if "ppo" in reads:
        config = config.merged({"ppo": PPOConfig.from_dict(config.ppo).to_dict()})
    if callable(getattr(oracle, "recorded_options", None)):
        config = config.merged({"oracle_options": oracle.recorded_options()})
    if "meta_solver_options" in reads:
        config = config.merged({"meta_solver_options": {
            **solvers.options(config.meta_solver), **config.meta_solver_options}})
    return Parts(config, context, oracle, evaluator, meta_solver, backend, algorithm,
                 deterministic="seed" not in reads)


def settings_read(config: RunConfig, evaluation: str) -> set[str]:
    """The fields of :data:`PART_SETTINGS` (and ``seed``) that a run of ``config`` reads, as
    its parts declare them: its oracle's, its evaluator's (``evaluation``: ``"exact"`` or
    ``"sampled"``) and its algorithm's (with the meta-solver and its options where it calls
    one). Reports group runs by these only, so a setting no part read never tells two methods
    apart; a run that reads no ``seed`` is deterministic."""
    entry = algorithms.get(config.algorithm)
    reads = {*oracles.get(config.oracle).settings, *EVALUATOR_SETTINGS[evaluation],
             *entry.settings, *entry.more(config, evaluation)}
    if entry.meta_solver is not None:
        reads |= {"meta_solver", "meta_solver_options"}
    return reads


def _check_needs(config: RunConfig, entry, oracle_entry, context: GameContext) -> None:
    """Refuse what the algorithm declares it needs and the game or the oracle lacks."""
    name, game = config.algorithm, config.game
    if entry.players is not None and context.num_players != entry.players:
        raise ConfigError(f"algorithm {name!r} needs a game of {entry.players} players; "
                          f"{game!r} has {context.num_players}")
    if entry.zero_sum and not context.game.zero_sum:
        raise ConfigError(f"algorithm {name!r} needs a zero-sum game; {game!r} is not one")
    purpose = entry.needs_tree(config)
    if purpose:
        context.require_tree(purpose)
    walked = context.tree is not None
    needs = entry.needs(config, walked)
    missing = [c for c in CAPABILITIES if c in needs - oracle_entry.capabilities]
    if missing:
        raise ConfigError(f"algorithm {name!r} needs an oracle that "
                          f"{' and '.join(CAPABILITIES[c] for c in missing)}"
                          f"{entry.because(config, walked)}; oracle {config.oracle!r} does not "
                          f"(oracles that do: {', '.join(_oracles_with(needs)) or 'none'})")


def _check_env_steps(oracle: str) -> None:
    if "trains" not in oracles.get(oracle).capabilities:
        raise ConfigError(f"env_step_budget has no effect in this run: oracle {oracle!r} takes "
                          f"no environment steps; use iterations or time_budget_s")


def check_limits(parts: Parts, limits: tuple) -> tuple:
    """``limits`` (:func:`psro.config.run_limits`: iterations, time budget, target, env-step
    budget) where this run's parts can reach them; ``ConfigError`` naming the one they cannot
    (given to ``PSRO.run`` or ``psro run --resume``, either ran until killed): an env-step
    budget where the oracle takes no environment steps, a target exploitability where the
    evaluator does not measure exploitability every iteration."""
    _, _, target, steps = limits
    if steps is not None:
        _check_env_steps(parts.config.oracle)
    if target is not None:
        _check_target(parts.evaluator, parts.config.game)
    return limits


def _check_target(evaluator: Evaluator, game: str) -> None:
    if not evaluator.measures_exploitability:
        raise ConfigError(f"target_exploitability needs exact exploitability, and {game!r} is "
                          f"too large to walk")


def _oracles_with(capabilities: frozenset[str]) -> list[str]:
    return [n for n in oracles.names() if capabilities <= oracles.get(n).capabilities]


def _meta_solver(config: RunConfig, kind: str | None):
    """The meta-solver the algorithm calls (None when it calls none); options checked."""
    try:
        if kind == "mixtures":
            return solvers.get(config.meta_solver, **config.meta_solver_options)
        if kind == "joint":
            solvers.get_joint(config.meta_solver, **config.meta_solver_options)
    except solvers.OptionError as err:
        raise ConfigError(str(err)) from None
    return None


def _check_meta_solver(config: RunConfig, meta_solver: Callable, num_players: int) -> None:
    """Fail before any work if the meta-solver cannot handle this kind of game."""
    try:
        meta_solver([np.zeros((1,) * num_players) for _ in range(num_players)])
    except (solvers.PayoffError, solvers.SolverError) as err:
        raise ConfigError(f"meta-solver {config.meta_solver!r} cannot solve this game: "
                          f"{err}") from None


def _without_unread(config: RunConfig, reads: set[str], entry, resumed: bool) -> RunConfig:
    """Refuse (or, for a resumed run, reset) the settings of :data:`PART_SETTINGS` that
    differ from their defaults while no part of this run reads them."""
    defaults = RunConfig()
    unread = [key for key in PART_SETTINGS
              if key not in reads and getattr(config, key) != getattr(defaults, key)]
    if not unread:
        return config
    if resumed:
        return dataclasses.replace(config, **{key: getattr(defaults, key) for key in unread})
    key = unread[0]
    raise UnreadSettingError(f"{key} has no effect in this run: "
                             f"{_why_unread(config, key, entry)}; leave it unset", key)


def _without_table_options(config: RunConfig, resumed: bool) -> RunConfig:
    """Refuse (or, for a resumed run, drop) the ``monte_carlo`` options that only fill payoff
    tables (:data:`TABLE_OPTIONS`) in a run whose table no part reads, so is not estimated."""
    unread = [key for key in TABLE_OPTIONS if key in config.monte_carlo]
    if not unread:
        return config
    if resumed:
        return dataclasses.replace(config, monte_carlo={
            k: v for k, v in config.monte_carlo.items() if k not in unread})
    key = f"monte_carlo.{unread[0]}"
    raise UnreadSettingError(f"{key} has no effect in this run: meta-solver "
                             f"{config.meta_solver!r} reads no payoffs, so the payoff table's "
                             f"entries are not estimated; leave it unset", key)


def _why_unread(config: RunConfig, key: str, entry) -> str:
    if key in ("meta_solver", "meta_solver_options"):
        return f"algorithm {config.algorithm!r} reads no meta-solver ({entry.why})"
    if key in algorithms.ALGORITHM_SETTINGS:
        owners = [name for name in algorithms.names()
                  if key in algorithms.get(name).settings]
        return f"it is a setting of algorithm {' or '.join(map(repr, owners))}, and this run's " \
               f"algorithm is {config.algorithm!r}"
    if key == "ppo":
        return f"oracle {config.oracle!r} trains no PPO best responses, and the game is " \
               f"evaluated exactly"
    if key == "lower_bound":
        return "exploitability is exact on the walked game tree (the lower bound is for games " \
               "too large to walk)"
    if key == "monte_carlo":
        return "payoffs are computed exactly on the walked game tree (Monte Carlo estimates " \
               "are for games too large to walk)"
    return f"oracle {config.oracle!r} reads no oracle options"
