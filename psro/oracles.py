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


class PPOBestResponse:
    """PPO best response (:mod:`psro.ppo`), tabularised on the walked tree so payoffs and
    exploitability stay exact.

    The seed of player p's best response at iteration k is derived from the run seed, k and p,
    so a resumed run trains exactly the networks an uninterrupted one would. With
    ``warm_start`` the player's previous network is the starting point.
    """

    name = "ppo"

    def __init__(self, tree: SequenceFormGame, game, config, run_seed: int):
        self.tree = tree
        self.game = game
        self.config = config
        self.run_seed = run_seed

    def seed(self, iteration: int, player: int) -> int:
        return int(np.random.SeedSequence([self.run_seed, iteration, player])
                   .generate_state(1)[0])

    def tasks(self, population, mixtures, iteration: int, tabular: bool = True) -> list[tuple]:
        """One training task per player. With ``tabular`` the members are tables played
        through the walked tree; otherwise they are played as they are (networks)."""
        from psro.neural import TabularActor, network_of

        actors = [[TabularActor(self.tree, m) for m in pop] for pop in population] if tabular \
            else [list(pop) for pop in population]
        tasks = []
        for p in range(len(population)):
            previous = next((network_of(m) for m in reversed(population[p])
                             if network_of(m) is not None), None)
            tasks.append((self.game, p, actors, mixtures, self.config,
                          self.seed(iteration, p), previous, {"iteration": iteration}))
        return tasks

    @staticmethod
    def run_task(*args):
        from psro.ppo import train_best_response

        return train_best_response(*args)

    def to_policy(self, player: int, result, iteration: int) -> TabularPolicy:
        from psro.policies import tabularise

        network, diagnostics = result
        last = diagnostics[-1] if diagnostics else {}
        if self.tree is None:
            network.name = f"ppo_p{player}_it{iteration}"
            network.metadata.update(iteration=iteration, oracle=self.name,
                                    final_mean_return=last.get("mean_return"))
            return network
        return tabularise(self.tree, network, player, name=f"ppo_p{player}_it{iteration}",
                          metadata={"iteration": iteration, "oracle": self.name,
                                    "env_steps": network.metadata.get("env_steps"),
                                    "final_mean_return": last.get("mean_return")})


ORACLES = ("exact", "ppo")
