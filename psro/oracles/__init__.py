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
class Target:
    """One best response to train: ``player``'s, against the other players' members weighted
    by ``mixtures`` (entry ``player`` is ignored). ``tag`` tells apart several targets of one
    player in an iteration (0 for the usual one: its seed and name are the plain PSRO ones).

    ``joint`` (JPSRO): when given, the opponents are *correlated*: their profiles are drawn
    from ``joint`` (an array of the payoff table's shape, non-negative, not all zero) summed
    over axis ``player`` and normalised, instead of independently from ``mixtures`` (which
    then only describe the marginals)."""

    player: int
    mixtures: tuple
    tag: int = 0
    joint: np.ndarray | None = field(default=None, compare=False)
    start: object = field(default=None, compare=False)
    """Where a trained (PPO) best response starts: None, the oracle's default (the player's
    newest network with ``warm_start``); a member, its network (pipeline PSRO continues each
    learner); :data:`SCRATCH`, a new network."""
    budget: int | None = field(default=None, compare=False)
    """Environment steps a trained (PPO) best response may spend: None, the oracle's own
    (``ppo.env_steps``); pipeline PSRO trains its learners in shorter chunks."""
    rounds: int = field(default=0, compare=False)
    """Anytime PSRO by regret matching (:mod:`psro.algorithms.anytime_rm`): when positive, the best
    response is trained in this many rounds while the other player's weights (``mixtures``, the
    first round's) are updated by regret matching against it; the member's metadata then holds the
    resulting mixture (``restricted``). Two-player games."""


SCRATCH = "scratch"
"""``Target.start`` for a best response trained from a new network."""


def plain_targets(mixtures: list[np.ndarray]) -> list[Target]:
    """One target per player against the meta-strategy (PSRO's usual step)."""
    return [Target(p, tuple(mixtures)) for p in range(len(mixtures))]


def targeted(oracle) -> bool:
    """Whether ``oracle`` trains arbitrary targets (has the targeted pair of methods)."""
    return hasattr(oracle, "targeted_tasks") and hasattr(oracle, "targeted_responses")


def _plain_mixtures(targets: list[Target]) -> list[np.ndarray] | None:
    if [t.player for t in targets] != list(range(len(targets))) or \
            any(t.tag or t.joint is not None or t.start is not None or t.budget is not None
                or t.rounds for t in targets):
        return None
    first = targets[0].mixtures
    if any(any(not np.array_equal(a, b) for a, b in zip(t.mixtures, first, strict=True))
           for t in targets):
        return None
    return list(first)


def target_tasks(oracle, iteration: int, populations: list[list],
                 targets: list[Target]) -> list[Task]:
    """The oracle's tasks for ``targets`` (its targeted method, or its plain ``tasks`` when
    the targets are one per player against the same mixtures)."""
    if targeted(oracle):
        return oracle.targeted_tasks(iteration, populations, targets)
    mixtures = _plain_mixtures(targets)
    if mixtures is None:
        raise ConfigError(f"oracle {oracle.name!r} trains one best response per player "
                          f"against the meta-strategy; this algorithm needs an oracle with "
                          f"targeted_tasks and targeted_responses")
    return oracle.tasks(iteration, populations, mixtures)


def target_responses(oracle, iteration: int, targets: list[Target],
                     results: list) -> list[Response]:
    """The new members made from the results of :func:`target_tasks`."""
    if targeted(oracle):
        return oracle.targeted_responses(iteration, targets, results)
    return oracle.responses(iteration, results)


class TargetedOracle:
    """Base of oracles that train arbitrary targets: the plain ``tasks``/``responses`` pair is
    their targeted pair applied to one target per player against the meta-strategy."""

    def tasks(self, iteration: int, populations: list[list],
              mixtures: list[np.ndarray]) -> list[Task]:
        """One task per player against the meta-strategy."""
        return self.targeted_tasks(iteration, populations, plain_targets(mixtures))

    def responses(self, iteration: int, results: list) -> list[Response]:
        """The new members of :meth:`tasks`' results, one per player."""
        targets = [Target(p, ()) for p in range(len(results))]
        return self.targeted_responses(iteration, targets, results)


@dataclass(frozen=True)
class OracleEntry:
    """A registered oracle: its factory, whether it plays simultaneous-move games through
    their turn-based version (as batched rollouts do), and the RunConfig fields it reads
    (``settings``: a setting no part of a run reads is refused, not silently dropped)."""

    factory: OracleFactory
    turn_based: bool = False
    settings: tuple[str, ...] = ("oracle_options", "seed")


def _exact(context: GameContext) -> Oracle:
    from psro.oracles.exact import ExactOracle

    return ExactOracle.build(context)


def _ppo(context: GameContext) -> Oracle:
    from psro.oracles.ppo import PPOOracle

    return PPOOracle.build(context)


_ORACLES: dict[str, OracleEntry] = {"exact": OracleEntry(_exact, settings=()),
                                    "ppo": OracleEntry(_ppo, turn_based=True,
                                                       settings=("ppo", "seed"))}


def register(name: str, factory: OracleFactory, *, turn_based: bool = False,
             settings: tuple[str, ...] = ("oracle_options", "seed")) -> None:
    """Make ``factory(context) -> Oracle`` available as oracle ``name``. ``turn_based``: the
    oracle plays simultaneous-move games through their turn-based version; ``settings``: the
    RunConfig fields it reads (``oracle_options``, checked by the factory, and ``seed``; add
    ``"ppo"`` if it reads the PPO table, leave ``"seed"`` out if it is deterministic).
    Registering a taken name is a :class:`ConfigError`."""
    if not isinstance(name, str) or not name:
        raise ConfigError(f"an oracle name must be a non-empty string; got {name!r}")
    if name in _ORACLES:
        raise ConfigError(f"oracle {name!r} is already registered")
    _ORACLES[name] = OracleEntry(factory, turn_based, tuple(settings))


def names() -> tuple[str, ...]:
    """Every registered oracle name."""
    return tuple(_ORACLES)


def get(name: str) -> OracleEntry:
    """The registry entry of oracle ``name``; :class:`ConfigError` listing the names
    otherwise."""
    if name not in _ORACLES:
        raise ConfigError(f"unknown oracle {name!r}; accepted: {', '.join(_ORACLES)}")
    return _ORACLES[name]


__all__ = ["Oracle", "OracleEntry", "OracleFactory", "Response", "SCRATCH", "Target",
           "TargetedOracle",
           "get", "names", "plain_targets", "register", "target_responses", "target_tasks",
           "targeted"]
