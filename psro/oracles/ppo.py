"""The PPO best response (:mod:`psro.rl.ppo`), one training task per player."""

from __future__ import annotations

import dataclasses

import numpy as np

from psro.backends.base import Task
from psro.context import GameContext
from psro.errors import ConfigError
from psro.extensive_form.members import Keys, network_of
from psro.extensive_form.policies import tabularise
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.oracles.spec import SCRATCH, Response, RoundHook, Target, TargetedOracle
from psro.rl.config import PPOConfig, Training
from psro.seeds import derive_seed


def ppo_best_response(training: Training, hook: RoundHook | None = None):
    """A pure task: :func:`psro.rl.ppo.train` (imported in the worker) of ``training``, in
    rounds where a :class:`~psro.oracles.spec.RoundHook` is given (its observer built here,
    its metadata added to the network's)."""
    from psro.rl.ppo import train

    return trained_in_rounds(train, training, hook)


def trained_in_rounds(train, training: Training, hook: RoundHook | None = None):
    """``train(training)``, in the rounds of ``hook`` where one is given (its observer built
    here, its metadata added to the network's): what every trained oracle's task does."""
    if hook is None:
        return train(training)
    observer = hook.observer(training, hook.options)
    network, diagnostics = train(dataclasses.replace(
        training, rounds=(hook.rounds, observer.after_round)))
    network.metadata.update(observer.metadata())
    return network, diagnostics


def joint_profiles(joint: np.ndarray, player: int) -> tuple[np.ndarray, np.ndarray]:
    """The opponents' correlated profiles of a target's ``joint`` (summed over ``player``'s
    axis) as ``(profiles, probs)`` for :class:`psro.rl.rollout.Rollouts`: one row per profile of
    positive probability, member indices per seat (0 in ``player``'s own column)."""
    opponents = np.asarray(joint, float).sum(axis=player, keepdims=True)
    index = np.argwhere(opponents > 0)
    probs = opponents[tuple(index.T)]
    return index.astype(np.int64), probs / probs.sum()


class PPOOracle(TargetedOracle):
    """PPO best responses against opponents drawn per episode from the meta-strategy.

    Player p's seed at iteration k is derived from the run seed, k and p, so a resumed run
    trains exactly the networks an uninterrupted one would. With ``warm_start`` the player's
    previous network is the starting point. Where the game's tree was walked, each network is
    tabularised (queried once at every information set) so payoffs and exploitability stay
    exact; the member is then a table that keeps its network for warm starts.
    """

    name = "ppo"
    warm_modules = ("psro.rl.ppo",)
    """What its tasks import (a processes backend imports it in every worker at the start)."""

    def __init__(self, game, tree: SequenceFormGame | None, config: PPOConfig, run_seed: int):
        self.game = game
        self.tree = tree
        self.config = config
        self.run_seed = run_seed

    @classmethod
    def build(cls, context: GameContext) -> PPOOracle:
        """The registry's factory: the run's PPO options."""
        if context.config.oracle_options:
            raise ConfigError(f"the ppo oracle reads its options from the ppo table, not "
                              f"oracle_options; got {', '.join(context.config.oracle_options)}")
        return cls(context.play_game, context.tree, PPOConfig.from_dict(context.config.ppo),
                   context.config.seed)

    def targeted_tasks(self, iteration: int, populations: list[list],
                       targets: list[Target]) -> list[Task]:
        """One seeded PPO training task per target (seed from the run seed, the iteration,
        the player and, for tagged targets, the tag), warm-started from the player's newest
        network."""
        actors = [[m.actor(self.tree) for m in pop] for pop in populations]
        tasks = []
        for target in targets:
            p = target.player
            if target.start is None:
                previous = next((network_of(m) for m in reversed(populations[p])
                                 if network_of(m) is not None), None)
            else:
                previous = None if target.start == SCRATCH else network_of(target.start)
            keys = (self.run_seed, iteration, p) + ((target.tag,) if target.tag else ())
            config = self.config if target.budget is None else \
                dataclasses.replace(self.config, env_steps=target.budget)
            joint = None if target.joint is None else joint_profiles(target.joint, p)
            training = Training(self.game, p, actors, list(target.mixtures), config,
                                derive_seed(*keys), previous, {"iteration": iteration}, joint,
                                diversity=target.diversity)
            tasks.append(self.task(training, target.round_hook))
        return tasks

    def task(self, training: Training, hook: RoundHook | None) -> Task:
        """The backend task that trains ``training`` (with the target's round hook)."""
        return Task(ppo_best_response, (training, hook))

    def targeted_responses(self, iteration: int, targets: list[Target],
                           results: list) -> list[Response]:
        """The trained networks as members (tabularised where the tree is walked, on one torch
        thread: the same tables whatever the machine's core count)."""
        from psro.rl.networks import one_thread  # torch is loaded: the results are networks

        out = []
        for target, (network, diagnostics) in zip(targets, results, strict=True):
            p = target.player
            carried = target.round_hook.carries if target.round_hook else ()
            last = diagnostics[-1] if diagnostics else {}
            name = f"ppo_p{p}_it{iteration}" + (f"_{target.tag}" if target.tag else "")
            metadata = {"iteration": iteration, "oracle": self.name,
                        "env_steps": network.metadata.get("env_steps"),
                        "final_mean_return": last.get("mean_return"),
                        **({Keys.TARGET: target.tag} if target.tag else {}),
                        **{k: network.metadata[k] for k in carried if k in network.metadata}}
            if self.tree is None:
                network.name = name
                network.metadata.update(metadata)
                member = network
            else:
                with one_thread():
                    member = tabularise(self.tree, network, p, name=name, metadata=metadata)
            out.append(Response(member, int(network.metadata.get("env_steps", 0)),
                                [{"iteration": iteration, "player": p, **d}
                                 for d in diagnostics]))
        return out
