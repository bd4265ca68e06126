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
from psro.oracles.spec import DiversityTerm, Response, Target, TargetedOracle
from solvers.diversity import population_rows


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


def diverse_best_response(candidate_rows: np.ndarray, mixture: np.ndarray,
                          term: DiversityTerm, width: int) -> tuple[np.ndarray, float]:
    """A pure task: Diverse PSRO's best response in a normal-form game, the pure strategy
    whose payoff row (``candidate_rows[a]``: its payoffs against each opponent member) scores
    highest on ``term``'s objective (ties to the lowest), as one-hot action probabilities of
    shape (1, width) (``width``: the tree's action count, at least the number of strategies),
    and its expected payoff against ``mixture``."""
    scores = [term.value(row, mixture) for row in candidate_rows]
    best = int(np.argmax(scores))
    probs = np.zeros((1, width))
    probs[0, best] = 1.0
    return probs, float(np.dot(mixture, candidate_rows[best]))


class ExactOracle(TargetedOracle):
    """Exact, deterministic tabular best responses, one per target, against the other
    players' meta-policy (or, for a target with a ``joint``, against their correlated
    profiles). Needs the walked tree.

    A target with a ``diversity`` term (Diverse PSRO) is answered on two-player normal-form
    games only (``payoffs``: the game's payoff arrays), by scoring every pure strategy on the
    term's objective (:func:`diverse_best_response`); in an extensive-form game the best
    response is a backward pass that cannot weigh a term of the whole population's payoff rows
    (``diverse`` refuses the pair before a run starts)."""

    name = "exact"

    def __init__(self, tree: SequenceFormGame, payoffs: list[np.ndarray] | None = None):
        self.tree = tree
        self.stack = PlanStack(tree)
        self.payoffs = payoffs

    @classmethod
    def build(cls, context: GameContext) -> ExactOracle:
        """The registry's factory: needs the walked tree."""
        if context.config.oracle_options:
            raise ConfigError(f"the exact oracle takes no options; got "
                              f"{', '.join(context.config.oracle_options)}")
        return cls(context.require_tree("the exact oracle"), context.game.payoffs)

    def targeted_tasks(self, iteration: int, populations: list[list],
                       targets: list[Target]) -> list[Task]:
        """One exact best-response task per target."""
        tasks = []
        for target in targets:
            if target.diversity is not None:
                tasks.append(self._diverse_task(populations, target))
                continue
            if target.joint is not None:
                reach = self.stack.correlated_reach(populations, target.player, target.joint)
                reach = reach / np.asarray(target.joint, float).sum()
                tasks.append(Task(correlated_best_response, (self.tree, target.player, reach)))
                continue
            mixed = self.stack.mixed(populations, list(target.mixtures))
            tasks.append(Task(exact_best_response, (self.tree, target.player, mixed)))
        return tasks

    def _diverse_task(self, populations: list[list], target: Target) -> Task:
        if self.payoffs is None or len(self.payoffs) != 2:
            raise ConfigError("the exact oracle weighs a diversity term only in two-player "
                              "normal-form games; use the ppo oracle")
        p = target.player
        q = 1 - p
        own = population_rows(self.payoffs, p)  # (own strategies, opponent strategies)
        # members' tables have one column per action of the game (the larger player's count)
        opponents = np.stack([m.probs[0, :own.shape[1]] for m in populations[q]])
        rows = own @ opponents.T  # candidate a against member j
        return Task(diverse_best_response, (rows, np.asarray(target.mixtures[q], float),
                                            target.diversity, self.tree.num_actions))

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
