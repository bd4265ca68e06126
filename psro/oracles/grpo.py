"""The GRPO best response (:mod:`psro.rl.grpo`), one training task per player: the PPO
oracle's tasks and members with a critic-free, group-relative update."""

from __future__ import annotations

import pyspiel

from psro.backends.base import Task
from psro.context import GameContext
from psro.errors import ConfigError
from psro.oracles.ppo import PPOOracle, trained_in_rounds
from psro.oracles.spec import RoundHook
from psro.rl.config import PPO_CRITIC_OPTIONS, GRPOOptions, PPOConfig, Training


def grpo_best_response(training: Training, options: GRPOOptions, hook: RoundHook | None = None):
    """A pure task: :func:`psro.rl.grpo.train_grpo` (imported in the worker) of ``training``,
    in rounds where a :class:`~psro.oracles.spec.RoundHook` is given."""
    from psro.rl.grpo import train_grpo

    return trained_in_rounds(lambda t: train_grpo(t, options), training, hook)


class GRPOOracle(PPOOracle):
    """GRPO best responses against opponents drawn per group from the meta-strategy.

    Seeds, warm starts, targets, round hooks, correlated opponents and tabularised members are
    the PPO oracle's (:class:`~psro.oracles.ppo.PPOOracle`); the update is GRPO's. Options:
    ``oracle_options`` ``group_size`` and ``kl_coef`` (:class:`~psro.rl.config.GRPOOptions`),
    the ``ppo`` table for the rest, without its critic's options."""

    name = "grpo"
    warm_modules = ("psro.rl.grpo",)

    def __init__(self, game, tree, config: PPOConfig, run_seed: int, options: GRPOOptions):
        super().__init__(game, tree, config, run_seed)
        self.options = options

    @classmethod
    def build(cls, context: GameContext) -> GRPOOracle:
        """The registry's factory: the run's ``oracle_options`` and ``ppo`` table. A
        :class:`ConfigError` for a bad or unknown option, a critic option set in the ``ppo``
        table, and a ``group_size`` that does not divide ``ppo.num_envs`` (the game is checked
        before the walk, by :meth:`check_game`)."""
        config = context.config
        ppo = PPOConfig.from_dict(config.ppo)
        defaults = PPOConfig()
        critic = [k for k in PPO_CRITIC_OPTIONS if getattr(ppo, k) != getattr(defaults, k)]
        if critic:
            raise ConfigError(f"ppo.{critic[0]} is read by PPO's critic, and the grpo oracle "
                              f"has none (its advantages are group-relative returns); leave "
                              f"{', '.join('ppo.' + k for k in PPO_CRITIC_OPTIONS)} unset")
        options = GRPOOptions.from_dict(config.oracle_options).validate(ppo)
        return cls(context.play_game, context.tree, ppo, config.seed, options)

    @staticmethod
    def check_game(game) -> None:
        """:class:`ConfigError` for a game (a loaded :class:`games.Game`) whose chance outcomes
        a group cannot share: a sampled-stochastic game draws them from a generator of its
        own."""
        kind = game.pyspiel_game.get_type()
        if kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
            raise ConfigError(f"the grpo oracle cannot play {game.pyspiel_game}: its chance "
                              f"outcomes are sampled by the game itself, so a group of episodes "
                              f"cannot share them; use the ppo oracle")

    def recorded_options(self) -> dict:
        """Every GRPO option with its value (written into the run's config)."""
        return self.options.to_dict()

    def task(self, training: Training, hook: RoundHook | None) -> Task:
        """The backend task that trains ``training`` by GRPO."""
        return Task(grpo_best_response, (training, self.options, hook))
