"""The exact best response: a deterministic tabular policy by one backward pass over the
sequence form."""

from __future__ import annotations

import numpy as np

from psro.backends.base import Task
from psro.context import GameContext
from psro.errors import ConfigError
from psro.evaluation.exact import PlanStack
from psro.extensive_form.members import Keys
from psro.extensive_form.policies import TabularPolicy
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.oracles.spec import Response, Target, TargetedOracle


def exact_best_response(tree: SequenceFormGame, player: int,
                        plans: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """A pure task: the deterministic best response of ``player`` to the other players' mixed
    realization plans, and its value."""
    return tree.best_response(player, plans)


def correlated_best_response(tree: SequenceFormGame, player: int,
                             reach: np.ndarray) -> tuple[np.ndarray, float]:
    """A pure task: the deterministic best response of ``player`` to correlated opponents,
    given as their reach of every leaf (:meth:`PlanStack.correlated_reach`), and its value."""
    return tree.best_response_to_reach(player, reach)


class ExactOracle(TargetedOracle):
    """Exact, deterministic tabular best responses, one per target, against the other
    players' meta-policy (or, for a target with a ``joint``, against their correlated
    profiles). Needs the walked tree."""

    name = "exact"

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree
        self.stack = PlanStack(tree)

    @classmethod
    def build(cls, context: GameContext) -> ExactOracle:
        """The registry's factory: needs the walked tree."""
        if context.config.oracle_options:
            raise ConfigError(f"the exact oracle takes no options; got "
                              f"{', '.join(context.config.oracle_options)}")
        return cls(context.require_tree("the exact oracle"))

    def targeted_tasks(self, iteration: int, populations: list[list],
                       targets: list[Target]) -> list[Task]:
        """One exact best-response task per target."""
        tasks = []
        for target in targets:
            if target.joint is not None:
                reach = self.stack.correlated_reach(populations, target.player, target.joint)
                reach = reach / np.asarray(target.joint, float).sum()
                tasks.append(Task(correlated_best_response, (self.tree, target.player, reach)))
                continue
            mixed = self.stack.mixed(populations, list(target.mixtures))
            tasks.append(Task(exact_best_response, (self.tree, target.player, mixed)))
        return tasks

    def targeted_responses(self, iteration: int, targets: list[Target],
                           results: list) -> list[Response]:
        """The best responses as tabular members (named by player, iteration and tag)."""
        out = []
        for target, (probs, value) in zip(targets, results, strict=True):
            p, tag = target.player, f"_{target.tag}" if target.tag else ""
            out.append(Response(TabularPolicy(
                p, probs, name=f"br_p{p}_it{iteration}{tag}",
                metadata={"iteration": iteration, "oracle": self.name, "br_value": value,
                          **({Keys.TARGET: target.tag} if target.tag else {})})))
        return out
