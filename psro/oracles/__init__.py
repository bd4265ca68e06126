"""Best-response oracles and their registry.

An oracle has ``name`` and two methods whose arguments are plain data:

- ``tasks(iteration, populations, mixtures) -> list[Task]``: the work of one iteration (one
  task per new member, usually one per player), each a :class:`psro.backends.Task` with its
  own seed, run by the backend;
- ``responses(iteration, results) -> list[Response]``: the new members made from the tasks'
  results, in the same order.

A *factory* builds an oracle from the run's :class:`~psro.context.GameContext` (config, game,
walked tree); it checks its options (``context.config.oracle_options``) and raises
:class:`~psro.errors.ConfigError` for bad ones. :func:`register` adds a factory by name, so
``RunConfig(oracle="mine")``, ``oracle = "mine"`` in TOML and ``--oracle mine`` all find it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from psro.backends import Task
from psro.context import GameContext
from psro.errors import ConfigError


@dataclass
class Response:
    """A new population member, the environment steps spent on it and the oracle's
    diagnostics rows (written to the run's oracle log)."""

    member: object
    env_steps: int = 0
    log: list[dict] = field(default_factory=list)


class Oracle(Protocol):
    """Computes each iteration's best responses as backend tasks, and turns their results into
    population members."""

    name: str

    def tasks(self, iteration: int, populations: list[list],
              mixtures: list[np.ndarray]) -> list[Task]:
        """The tasks that compute this iteration's best responses (run on the backend)."""

    def responses(self, iteration: int, results: list) -> list[Response]:
        """The new members (and their diagnostics) from the tasks' results."""


OracleFactory = Callable[[GameContext], Oracle]


@dataclass(frozen=True)
class OracleEntry:
    """A registered oracle: its factory, and whether it plays simultaneous-move games through
    their turn-based version (as batched rollouts do)."""

    factory: OracleFactory
    turn_based: bool = False


def _exact(context: GameContext) -> Oracle:
    from psro.oracles.exact import ExactOracle

    return ExactOracle.build(context)


def _ppo(context: GameContext) -> Oracle:
    from psro.oracles.ppo import PPOOracle

    return PPOOracle.build(context)


_ORACLES: dict[str, OracleEntry] = {"exact": OracleEntry(_exact),
                                    "ppo": OracleEntry(_ppo, turn_based=True)}


def register(name: str, factory: OracleFactory, *, turn_based: bool = False) -> None:
    """Make ``factory(context) -> Oracle`` available as oracle ``name``. ``turn_based``: the
    oracle plays simultaneous-move games through their turn-based version. Registering a taken
    name is a :class:`ConfigError`."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"an oracle name must be a non-empty string; got {name!r}")
    if name in _ORACLES:
        raise ConfigError(f"oracle {name!r} is already registered")
    _ORACLES[name] = OracleEntry(factory, turn_based)


def names() -> tuple[str, ...]:
    """Every registered oracle name."""
    return tuple(_ORACLES)


def get(name: str) -> OracleEntry:
    """The registry entry of oracle ``name``; :class:`ConfigError` listing the names
    otherwise."""
    if name not in _ORACLES:
        raise ConfigError(f"unknown oracle {name!r}; accepted: {', '.join(_ORACLES)}")
    return _ORACLES[name]


__all__ = ["Oracle", "OracleEntry", "OracleFactory", "Response", "get", "names", "register"]
