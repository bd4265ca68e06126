"""Best-response oracles. An oracle returns, for one player, a new policy that best responds
to the other players' meta-policy (their populations mixed by the meta-strategy)."""

from __future__ import annotations

import numpy as np

from psro.policies import TabularPolicy
from psro.sequence_form import SequenceFormGame


def exact_best_response_task(tree: SequenceFormGame, player: int,
                             plans: list[np.ndarray]) -> tuple[np.ndarray, float]:
    """A pure task (backend-friendly): the deterministic best response of ``player`` to the
    other players' mixed realization plans, and its value."""
    return tree.best_response(player, plans)


class ExactBestResponse:
    """Exact, deterministic tabular best response by a backward pass over the sequence form.

    Needs the game tree (``SequenceFormGame``), which is refused for games past the walk
    budget with a message suggesting ``--oracle ppo``.
    """

    name = "exact"

    def __init__(self, tree: SequenceFormGame):
        self.tree = tree

    def tasks(self, mixed_plans: list[np.ndarray]) -> list[tuple]:
        """One task per player, each the arguments of :func:`exact_best_response_task`."""
        return [(self.tree, p, mixed_plans) for p in range(self.tree.num_players)]

    run_task = staticmethod(exact_best_response_task)

    def to_policy(self, player: int, result, iteration: int) -> TabularPolicy:
        probs, value = result
        return TabularPolicy(player, probs, name=f"br_p{player}_it{iteration}",
                             metadata={"iteration": iteration, "oracle": self.name,
                                       "br_value": value})


ORACLES = ("exact", "ppo")
