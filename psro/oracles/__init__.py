"""Best-response oracles and their registry.

An oracle has ``name`` and two methods whose arguments are plain data:

- ``tasks(iteration, populations, mixtures) -> list[Task]``: the work of one iteration (one
  task per new member, usually one per player), each a :class:`psro.backends.Task` with its
  own seed, run by the backend;
- ``responses(iteration, results) -> list[Response]``: the new members made from the tasks'
  results, in the same order.

An oracle may also have the *targeted* pair, which variants that train several best responses
per player need (``rectified``): ``targeted_tasks(iteration, populations, targets)`` and
``targeted_responses(iteration, targets, results)``, one task and one member per
:class:`Target` (a player and the opponents' weights it trains against). The built-in oracles
have both; :func:`target_tasks` and :func:`target_responses` fall back to ``tasks`` and
``responses`` for an oracle without them when each player has one target.

A *factory* builds an oracle from the run's :class:`~psro.context.GameContext` (config, game,
walked tree); it checks its options (``context.config.oracle_options``) and raises
:class:`~psro.errors.ConfigError` for bad ones. :func:`register` adds a factory by name, so
``RunConfig(oracle="mine")``, ``oracle = "mine"`` in TOML and ``--oracle mine`` all find it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from psro.context import GameContext
from psro.errors import ConfigError
from psro.oracles.exact import ExactOracle
from psro.oracles.grpo import GRPOOracle
from psro.oracles.ppo import PPOOracle
from psro.oracles.spec import (
    SCRATCH,
    DiversityTerm,
    Oracle,
    Response,
    RoundHook,
    Target,
    TargetedOracle,
    plain_targets,
    target_responses,
    target_tasks,
    targeted,
)

OracleFactory = Callable[[GameContext], Oracle]
"""Builds an oracle from the run's game context (config, game, walked tree)."""

CAPABILITIES = {
    "trains": "trains its best responses in environment steps (warm starts, budgets, plateaus)",
    "round_hook": "trains in rounds with a hook between them",
    "targets": "trains several best responses per player against targets of its own "
               "(targeted_tasks and targeted_responses)",
    "correlated": "trains against correlated opponents (a joint distribution)",
    "exact": "computes exact best responses (so a run may stop once none improves)",
    "diversity": "weighs a population-diversity term in its best responses' objective "
                 "(Target.diversity)",
}
"""What an oracle may declare it can do, in words (algorithms declare what they need)."""


@dataclass(frozen=True)
class OracleEntry:
    """A registered oracle: its factory; whether it plays simultaneous-move games through
    their turn-based version (as batched rollouts do); the RunConfig fields it reads
    (``settings``: a setting no part of a run reads is refused, not silently dropped); and
    what it can do (``capabilities``, keys of :data:`CAPABILITIES`), from which every refusal
    of an algorithm that needs more is derived; and ``game_check(game)``, which raises
    :class:`ConfigError` for a loaded :class:`games.Game` it cannot play, before the game is
    walked (None: it plays any)."""

    factory: OracleFactory
    turn_based: bool = False
    settings: tuple[str, ...] = ("oracle_options", "seed")
    capabilities: frozenset[str] = frozenset()
    game_check: Callable | None = None


def _exact(context: GameContext) -> Oracle:
    return ExactOracle.build(context)


def _ppo(context: GameContext) -> Oracle:
    return PPOOracle.build(context)


def _grpo(context: GameContext) -> Oracle:
    return GRPOOracle.build(context)


_ORACLES: dict[str, OracleEntry] = {
    "exact": OracleEntry(_exact, settings=(),
                         capabilities=frozenset({"targets", "correlated", "exact", "diversity"})),
    "ppo": OracleEntry(_ppo, turn_based=True, settings=("ppo", "seed"),
                       capabilities=frozenset({"targets", "trains", "round_hook",
                                               "correlated", "diversity"})),
    "grpo": OracleEntry(_grpo, turn_based=True, settings=("ppo", "oracle_options", "seed"),
                        capabilities=frozenset({"targets", "trains", "round_hook",
                                                "correlated"}),
                        game_check=GRPOOracle.check_game),
}


def register(name: str, factory: OracleFactory, *, turn_based: bool = False,
             settings: tuple[str, ...] = ("oracle_options", "seed"),
             capabilities: tuple[str, ...] = (), game_check: Callable | None = None) -> None:
    """Make ``factory(context) -> Oracle`` available as oracle ``name``. ``turn_based``: the
    oracle plays simultaneous-move games through their turn-based version; ``settings``: the
    RunConfig fields it reads (``oracle_options``, checked by the factory, and ``seed``; add
    ``"ppo"`` if it reads the PPO table, leave ``"seed"`` out if it is deterministic);
    ``capabilities``: what it can do beyond one best response per player against the
    meta-strategy (keys of :data:`CAPABILITIES`; ``"targets"`` needs the targeted pair of
    methods); ``game_check(game)``: raises :class:`ConfigError` for a loaded game the oracle
    cannot play, before it is walked. Registering a taken name, or an unknown capability, is a
    :class:`ConfigError`."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"an oracle name must be a non-empty string; got {name!r}")
    if name in _ORACLES:
        raise ConfigError(f"oracle {name!r} is already registered")
    unknown = sorted(set(capabilities) - set(CAPABILITIES))
    if unknown:
        raise ConfigError(f"unknown oracle capability {unknown[0]!r}; accepted: "
                          f"{', '.join(CAPABILITIES)}")
    _ORACLES[name] = OracleEntry(factory, turn_based, tuple(settings), frozenset(capabilities),
                                 game_check)


def names() -> tuple[str, ...]:
    """Every registered oracle name."""
    return tuple(_ORACLES)


def get(name: str) -> OracleEntry:
    """The registry entry of oracle ``name``; :class:`ConfigError` listing the names
    otherwise."""
    if name not in _ORACLES:
        raise ConfigError(f"unknown oracle {name!r}; accepted: {', '.join(_ORACLES)}")
    return _ORACLES[name]


__all__ = ["CAPABILITIES", "DiversityTerm", "Oracle", "OracleEntry", "OracleFactory", "Response",
           "RoundHook", "SCRATCH", "Target", "TargetedOracle", "get", "names", "plain_targets",
           "register", "target_responses", "target_tasks", "targeted"]
