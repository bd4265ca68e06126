"""What the policy-gradient best responses (PPO, :mod:`psro.rl.ppo`; GRPO, :mod:`psro.rl.grpo`)
share around their updates: the round schedule of a round hook, the warm start, and the checks
that keep an untrained or diverged network out of the population."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from psro.errors import ConfigError, TrainingError
from psro.rl.config import PPOConfig
from psro.rl.networks import ActorCritic, NeuralPolicy
from psro.rl.rollout import Rollouts


class RoundSchedule:
    """Calls a best response's round hook (``rounds = (R, hook)`` of
    :class:`~psro.rl.config.Training`) at the end of each of R equal rounds of the env-step
    budget (a batch's collection stops there) and passes the weights it returns to the
    rollouts, as the other player's members' new weights."""

    def __init__(self, rounds: tuple[int, Callable] | None, games: Rollouts, player: int,
                 config: PPOConfig, meta: Callable[[], dict]):
        self.count, self.hook = rounds if rounds else (0, None)
        self.games, self.player, self.config, self.meta = games, player, config, meta
        self.done = 0

    def budget(self) -> int:
        """Where the next batch's collection stops: the end of the current round (or of the
        whole budget)."""
        if self.done >= self.count:
            return self.config.env_steps
        return -(-(self.done + 1) * self.config.env_steps // self.count)

    def after_update(self, net: ActorCritic, env_steps: int, final: bool = False) -> None:
        """Call the hook when the current round's steps are spent (or training ended)."""
        if self.done >= self.count or (env_steps < self.budget() and not final):
            return
        weights = self.hook(self.done, NeuralPolicy(self.player, net, self.meta()))
        self.games.probs[1 - self.player] = np.asarray(weights, float) / np.sum(weights)
        self.done += 1


def check_trained(diagnostics: list[dict], config: PPOConfig, player: int) -> None:
    """A :class:`ConfigError` where the budget made no update (no episode ended within it):
    the network would join the population as it started, untrained."""
    if not diagnostics:
        raise ConfigError(f"ppo.env_steps ({config.env_steps:,}) was spent before any episode "
                          f"of player {player} ended, so its best response was never trained: "
                          f"ppo.num_envs ({config.num_envs:,}) games take a step at "
                          f"once; give env_steps at least num_envs times an episode's length, "
                          f"or fewer num_envs")


def warm_start(net: ActorCritic, init: NeuralPolicy) -> None:
    """Start ``net`` from the weights of ``init`` (the player's previous best response: its
    actor, and its critic where both have one); a :class:`TrainingError` where they are not
    finite."""
    net.actor.load_state_dict(init.net.actor.state_dict())
    if net.critic is not None and init.net.critic is not None:
        net.critic.load_state_dict(init.net.critic.state_dict())
    require_finite(net, where="the network it starts from (the warm start) has")


def require_finite(net: ActorCritic, stats: torch.Tensor | None = None,
                   where: str = "its loss or weights are", method: str = "PPO") -> None:
    """:class:`TrainingError` where a weight of ``net`` (or a loss in ``stats``) is not
    finite: such a network never becomes a member."""
    if (stats is None or torch.isfinite(stats).all()) and \
            all(torch.isfinite(p).all() for p in net.parameters()):
        return
    raise TrainingError(f"a {method} best response diverged: {where} values that are not "
                        f"finite (a setting far out of scale, such as a huge diversity weight "
                        f"or learning rate); the iterations before it are kept")
