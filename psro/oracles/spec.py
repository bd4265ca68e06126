"""What an oracle is asked for and what it returns: the :class:`Target` of one best response
(a player, the opponents it trains against, and for trained oracles where to start, how many
environment steps to spend and a :class:`RoundHook`), the :class:`Response` (a new member), and
the :class:`Oracle` interface with the helpers that let plain oracles answer plain targets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from psro.backends.base import Task
from psro.errors import ConfigError
from solvers.diversity import cardinality_gradient, joined_cardinality


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


@dataclass(frozen=True)
class RoundHook:
    """Training in rounds (for trained oracles that declare ``"round_hook"``): the budget is
    cut into ``rounds`` equal parts; in the worker, ``observer(training, options)`` (a
    module-level class or function, so the hook pickles; ``training`` the
    :class:`psro.rl.config.Training` being run) is built, its ``after_round(r, policy)``
    returns the other player's new weights after round r (the policy as it stands), and its
    ``metadata()`` is added to the trained network's metadata; ``carries`` names the keys that
    the new member keeps."""

    rounds: int
    observer: Callable
    options: dict = field(default_factory=dict)
    carries: tuple[str, ...] = ()


@dataclass(frozen=True)
class DiversityTerm:
    """A population-diversity term in a best response's objective (Diverse PSRO,
    :mod:`psro.algorithms.diverse`): the response of ``player`` maximises

        ``sum_j w_j r_j / scale + weight * E|Y|([rows; r] / scale)``

    where ``r_j`` is its expected return against opponent member j, ``w`` the opponents'
    meta-strategy, ``rows`` (shape ``(K_player, K_opponent)``) the payoff rows of the player's
    current members against the opponent's members (the payoff table), and ``E|Y|`` the
    expected cardinality of the DPP on payoff rows (:func:`solvers.expected_cardinality`).
    ``scale`` is the game's largest absolute payoff. Two-player games."""

    weight: float
    rows: np.ndarray
    scale: float

    def value(self, row: np.ndarray, mixture: np.ndarray) -> float:
        """The objective of a response whose payoff row is ``row`` (shape ``(K_opponent,)``)."""
        cardinality = joined_cardinality(self.rows, row, self.scale)
        return float(np.dot(mixture, row) / self.scale + self.weight * cardinality)

    def weights(self, row: np.ndarray, mixture: np.ndarray) -> np.ndarray:
        """The objective's gradient with respect to the response's returns against each
        opponent member, times ``scale``: ``c_j = w_j + weight * scale * dE|Y|/dr_j`` at
        ``row``. A policy gradient of ``sum_j c_j r_j / scale`` is the objective's gradient
        there (``c_j`` may be negative: losing to some members can make the population more
        diverse)."""
        _, gradient = cardinality_gradient(self.rows, row, self.scale)
        return np.asarray(mixture, float) + self.weight * self.scale * gradient


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
    round_hook: RoundHook | None = field(default=None, compare=False)
    """For oracles that declare ``"round_hook"``: train in rounds, letting the hook change the
    other player's weights between them (anytime PSRO by regret matching)."""
    diversity: DiversityTerm | None = field(default=None, compare=False)
    """For oracles that declare ``"diversity"``: a population-diversity term added to the best
    response's objective (Diverse PSRO)."""


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
                or t.round_hook is not None or t.diversity is not None for t in targets):
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
