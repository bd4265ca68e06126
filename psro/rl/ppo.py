"""PPO best response (CleanRL's recipe, adapted to turn-based multi-agent games).

The learner plays one seat; every other seat is played, per episode, by a population member
drawn from that player's meta-strategy ``w_k`` (or, with probability ``self_play``, its newest
member). Many games run at once (:class:`games.simulation.VectorGame`); forward passes are
batched over all environments where the learner is to move, and over the environments of each
opponent member. Only the learner's decisions are trained on; an episode's reward is the
learner's return at its end. GAE, clipped surrogate, value loss, entropy bonus, minibatch
epochs, Adam with linear learning-rate decay and gradient-norm clipping follow CleanRL's
``ppo.py``. The learning rate falls linearly with the fraction of the env-step budget spent
(every player's decisions, the unit of ``env_steps``), so the last update runs near 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from psro.rl.config import PPOConfig, Training
from psro.rl.diversity import opponent_draws
from psro.rl.networks import ActorCritic, NeuralPolicy, one_thread
from psro.rl.response_training import (
    Collector,
    RoundSchedule,
    clipped_policy_epochs,
    training_loop,
    warm_start,
)
from psro.rl.rollout import Rollouts


def train_best_response(game, player: int, opponents: list[list], weights: list[np.ndarray],
                        config: PPOConfig, seed: int, init: NeuralPolicy | None = None,
                        metadata: dict | None = None,
                        joint: tuple[np.ndarray, np.ndarray] | None = None,
                        rounds: tuple[int, Callable] | None = None
                        ) -> tuple[NeuralPolicy, list[dict]]:
    """Train a PPO best response of ``player`` against the opponents' mixtures.

    ``opponents[q]`` lists player q's population members' actors (see
    :mod:`psro.extensive_form.members`), ``weights[q]`` their meta-strategy; entry ``player`` is
    ignored. ``joint``: correlated opponents instead, ``(profiles, probs)`` as
    :class:`psro.rl.rollout.Rollouts` takes them. ``rounds = (R, hook)``: the budget is cut into R
    equal rounds; after the update that ends round r, ``hook(r, policy)`` is called with the network
    as it stands (a :class:`NeuralPolicy`) and returns new weights of the other player's members,
    drawn from the next episode on (anytime PSRO's regret matching,
    :mod:`psro.algorithms.anytime_rm`); training that stops early (plateau) calls it once more at
    the end. Two-player games. Returns the trained :class:`NeuralPolicy` and one diagnostics row per
    update (mean return, approx KL, clip fraction, entropy, explained variance, steps/s, ...).
    Deterministic for a given seed on CPU. Runs torch with one thread (small networks: fastest and
    reproducible) and puts the caller's thread count and torch random state back before it returns.
    """
    return train(Training(game, player, opponents, weights, config, seed, init, metadata, joint,
                          rounds))


def train(training: Training) -> tuple[NeuralPolicy, list[dict]]:
    """:func:`train_best_response` of one :class:`~psro.rl.config.Training` (Diverse PSRO's
    objective with ``training.diversity``: :class:`psro.rl.diversity.DiversityWeights`)."""
    training.config.validate()
    with one_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(training.seed)
        return _train(training)


def _train(t: Training) -> tuple[NeuralPolicy, list[dict]]:
    game, player, config, seed = t.game, t.player, t.config, t.seed
    opponents, init, metadata, joint, rounds = (t.opponents, t.init, t.metadata, t.joint,
                                                t.rounds)
    rng = np.random.default_rng(seed)
    seats = [None if q == player else members for q, members in enumerate(opponents)]
    diversity, drawn = opponent_draws(t)
    games = Rollouts(game, seats, drawn, config.num_envs, rng=rng, env_seed=seed + 1,
                     self_play=config.self_play, joint=joint)
    net = ActorCritic(games.vg.obs_size, games.vg.num_actions, config.hidden)
    if init is not None and config.warm_start:
        warm_start(net, init)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5)
    scale = max(abs(game.max_utility()), abs(game.min_utility()), 1e-9) \
        if config.scale_returns else 1.0
    learner = Collector(games, net, player, torch.Generator().manual_seed(seed), scale,
                        record_opponents=bool(diversity))

    def meta() -> dict:
        return {"obs_shape": list(games.vg.obs_shape), "num_actions": games.vg.num_actions,
                "hidden": list(config.hidden), "ppo": config.to_dict(), "seed": seed,
                "env_steps": learner.env_steps, "greedy": config.greedy, **(metadata or {})}

    hooks = RoundSchedule(rounds, games, player, config, meta)

    def update(batch: dict) -> dict:
        extra = diversity.reweight(batch, learner.opponent_of, scale) if diversity else {}
        stats = {**_ppo_update(net, optimizer, batch, config, rng), **extra}
        stats["mean_return"] = float(batch["episode_returns"].mean()) * scale
        return stats

    diagnostics = training_loop(learner, hooks, net, optimizer, config, player, update)
    return NeuralPolicy(player, net, meta()), diagnostics


def _gae(batch: dict, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates over episodes laid out consecutively in time order;
    the value after an episode's last transition is 0 (episodes end in terminal states)."""
    values, rewards, last = batch["value"], batch["reward"], batch["last"]
    adv = np.zeros(len(values))
    running = 0.0
    for t in range(len(values) - 1, -1, -1):
        if last[t]:
            next_value, running = 0.0, 0.0
        else:
            next_value = values[t + 1]
        delta = rewards[t] + gamma * next_value - values[t]
        running = delta + gamma * lam * running
        adv[t] = running
    return adv


def _ppo_update(net: ActorCritic, optimizer, batch: dict, config: PPOConfig, rng) -> dict:
    adv_np = _gae(batch, config.gamma, config.gae_lambda)
    values_np = batch["value"].astype(np.float64)
    returns_t = torch.as_tensor(adv_np + values_np, dtype=torch.float32)

    def loss(b, obs, logp, policy_loss, entropy):
        value_loss = 0.5 * ((net.value(obs) - returns_t[b]) ** 2).mean()
        return (policy_loss - config.entropy_coef * entropy + config.value_coef * value_loss,
                value_loss)

    kls, clipfracs, entropies, vlosses, plosses = clipped_policy_epochs(
        net, optimizer, batch, torch.as_tensor(adv_np, dtype=torch.float32), config, rng, loss,
        normalise=True, method="PPO")
    target = returns_t.numpy()
    var = np.var(target)
    explained = float("nan") if var == 0 else float(1 - np.var(target - values_np) / var)
    return {"approx_kl": float(np.mean(kls)), "clip_fraction": float(np.mean(clipfracs)),
            "entropy": float(np.mean(entropies)), "value_loss": float(np.mean(vlosses)),
            "policy_loss": float(np.mean(plosses)), "explained_variance": explained}
