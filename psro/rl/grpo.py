"""GRPO best response: group-relative policy optimisation, critic-free (Shao et al. 2024,
DeepSeekMath; DeepSeek-R1's policy update), on the toolkit's turn-based games.

The learner plays one seat against opponents drawn from the meta-strategy, as the PPO best
response does (:mod:`psro.rl.ppo`), but its episodes come in groups of G
(:class:`psro.rl.rollout.GroupedRollouts`): a group's episodes share their chance outcomes and
their drawn opponent members, so they differ only by the learner's own choices (and the
opponents' sampled actions). No value network is trained. Every decision of an episode gets
the episode's group-relative advantage

    A_i = (R_i - mean(R_group)) / (std(R_group) + 1e-8),

with ``std`` the group's population standard deviation (a group whose returns are all equal
teaches nothing). The loss over a batch of complete groups, averaged over the learner's
decisions (a token-level mean, as PPO's here), is PPO's clipped surrogate plus ``kl_coef``
times the KL divergence to the reference policy, the network the response started from (its
warm start, or its random initialisation), by the unbiased estimator
``pi_ref / pi - log(pi_ref / pi) - 1`` at the action taken, minus the entropy bonus. Epochs,
minibatches, Adam with linear learning-rate decay and gradient-norm clipping are PPO's.
"""

from __future__ import annotations

import copy

import numpy as np
import torch

from psro.errors import ConfigError
from psro.rl.config import GRPOOptions, PPOConfig, Training
from psro.rl.networks import ActorCritic, NeuralPolicy, one_thread
from psro.rl.response_training import (
    Collector,
    RoundSchedule,
    clipped_policy_epochs,
    training_loop,
    warm_start,
)
from psro.rl.rollout import GroupedRollouts


def train_grpo(training: Training, options: GRPOOptions) -> tuple[NeuralPolicy, list[dict]]:
    """Train a GRPO best response of ``training.player`` (a :class:`~psro.rl.config.Training`
    as the PPO best response takes it, its ``config`` read for the options GRPO shares with
    PPO) with the group size and KL weight of ``options``. Returns the trained
    :class:`NeuralPolicy` (an actor without a critic) and one diagnostics row per update (mean
    return, approx KL to the collecting policy, KL to the reference, clip fraction, entropy,
    groups and flat groups, steps/s, ...). Deterministic for a given seed on CPU; runs torch
    with one thread and puts the caller's thread count and torch random state back.
    :class:`ConfigError` for a diversity term (a group shares its opponent, so Diverse PSRO's
    per-opponent reward weights cancel in the group-relative advantage)."""
    training.config.validate()
    options.validate(training.config)
    if training.diversity is not None:
        raise ConfigError("the grpo oracle cannot weigh a diversity term: a group's episodes "
                          "share their opponent, so per-opponent reward weights cancel in "
                          "its group-relative advantages; use the ppo oracle")
    with one_thread(), torch.random.fork_rng(devices=[]):
        torch.manual_seed(training.seed)
        return _train(training, options)


class _GroupCollector(Collector):
    """Plays the learner's seat in grouped rollouts; hands each group to the buffer once all
    its episodes have ended, with their group-relative advantages as their returns."""

    def __init__(self, games: GroupedRollouts, net: ActorCritic, player: int,
                 gen: torch.Generator):
        super().__init__(games, net, player, gen)
        self.waiting: dict[int, tuple[list, list]] = {}  # group -> (episodes, returns) ended
        self.ended_returns: list[float] = []  # returns of the groups completed since last read
        self.flat_groups = self.groups = 0

    def episodes_ended(self, envs: np.ndarray, returns: np.ndarray) -> None:
        """Keep each ended episode with its group; a group whose G episodes have all ended
        goes to the buffer."""
        size = self.games.group_size
        for i, r in zip(envs.tolist(), returns.tolist(), strict=True):
            group = int(self.games.group[i])
            episodes, rets = self.waiting.setdefault(group, ([], []))
            episodes.append(int(self.episode[i]))
            rets.append(r)
            if len(rets) == size:
                del self.waiting[group]
                self.buffer.end(np.array(episodes), group_advantages(np.array(rets)))
                self.ended_returns.extend(rets)
                self.groups += 1
                self.flat_groups += int(np.ptp(rets) == 0)

    def values(self, obs: torch.Tensor) -> np.ndarray:
        """No critic: zeros."""
        return np.zeros(len(obs))

    def read_groups(self) -> tuple[float, int, int]:
        """Mean return, groups and flat groups (all returns equal) completed since the last
        read."""
        mean = float(np.mean(self.ended_returns)) if self.ended_returns else float("nan")
        out = (mean, self.groups, self.flat_groups)
        self.ended_returns, self.groups, self.flat_groups = [], 0, 0
        return out


def group_advantages(returns: np.ndarray) -> np.ndarray:
    """GRPO's advantages of one group's episodes: ``(R - mean(R)) / (std(R) + 1e-8)``, the
    population standard deviation (all 0 where the returns are equal)."""
    returns = np.asarray(returns, float)
    return (returns - returns.mean()) / (returns.std() + 1e-8)


def _train(t: Training, options: GRPOOptions) -> tuple[NeuralPolicy, list[dict]]:
    game, player, config, seed = t.game, t.player, t.config, t.seed
    rng = np.random.default_rng(seed)
    seats = [None if q == player else members for q, members in enumerate(t.opponents)]
    weights = [None if q == player else w for q, w in enumerate(t.weights)]
    games = GroupedRollouts(game, seats, weights, config.num_envs, rng=rng, env_seed=seed + 1,
                            group_size=options.group_size, self_play=config.self_play,
                            joint=t.joint)
    net = ActorCritic(games.vg.obs_size, games.vg.num_actions, config.hidden, critic=False)
    if t.init is not None and config.warm_start:
        warm_start(net, t.init)
    reference = copy.deepcopy(net).requires_grad_(False)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5)
    learner = _GroupCollector(games, net, player, torch.Generator().manual_seed(seed))

    def meta() -> dict:
        return {"obs_shape": list(games.vg.obs_shape), "num_actions": games.vg.num_actions,
                "hidden": list(config.hidden), "ppo": config.to_dict(),
                "grpo": options.to_dict(), "seed": seed, "env_steps": learner.env_steps,
                "greedy": config.greedy, **(t.metadata or {})}

    hooks = RoundSchedule(t.rounds, games, player, config, meta)

    def update(batch: dict) -> dict:
        stats = _grpo_update(net, reference, optimizer, batch, config, options.kl_coef, rng)
        stats["mean_return"], stats["groups"], stats["flat_groups"] = learner.read_groups()
        return stats

    diagnostics = training_loop(learner, hooks, net, optimizer, config, player, update)
    return NeuralPolicy(player, net, meta()), diagnostics


def _grpo_update(net: ActorCritic, reference: ActorCritic, optimizer, batch: dict,
                 config: PPOConfig, kl_coef: float, rng: np.random.Generator) -> dict:
    """Epochs of minibatch steps on one batch of complete groups (``batch["reward"]`` holds
    each episode's advantage at its last decision; every decision of the episode gets it)."""
    last = batch["last"]
    index = np.concatenate(([0], np.cumsum(last[:-1])))  # episode number of each decision
    adv_t = torch.as_tensor(batch["reward"][last][index], dtype=torch.float32)
    with torch.no_grad():
        ref_logp_t = torch.log_softmax(reference.logits(
            torch.as_tensor(batch["obs"]), torch.as_tensor(batch["mask"])), dim=-1).gather(
            1, torch.as_tensor(batch["action"])[:, None])[:, 0]

    def loss(b, obs, logp, policy_loss, entropy):
        ref_gap = ref_logp_t[b] - logp
        kl_ref = (ref_gap.exp() - ref_gap - 1).mean()
        return policy_loss + kl_coef * kl_ref - config.entropy_coef * entropy, kl_ref

    kls, clipfracs, entropies, kl_refs, plosses = clipped_policy_epochs(
        net, optimizer, batch, adv_t, config, rng, loss, normalise=False, method="GRPO")
    return {"approx_kl": float(np.mean(kls)), "clip_fraction": float(np.mean(clipfracs)),
            "entropy": float(np.mean(entropies)), "kl_reference": float(np.mean(kl_refs)),
            "policy_loss": float(np.mean(plosses))}
