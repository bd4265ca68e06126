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
import time

import numpy as np
import torch

from psro.errors import ConfigError
from psro.rl.buffer import EpisodeBuffer
from psro.rl.config import GRPOOptions, PPOConfig, Training
from psro.rl.networks import ActorCritic, NeuralPolicy, one_thread
from psro.rl.response_training import RoundSchedule, check_trained, require_finite, warm_start
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


class _GroupCollector:
    """Plays the learner's seat in grouped rollouts; hands each group to the buffer once all
    its episodes have ended, with their group-relative advantages as their returns."""

    def __init__(self, games: GroupedRollouts, net: ActorCritic, player: int,
                 gen: torch.Generator):
        self.games, self.net, self.player, self.gen = games, net, player, gen
        self.buffer = EpisodeBuffer()
        self.episode = np.arange(games.num_envs)  # current episode id of each environment
        self.next_episode = games.num_envs
        self.waiting: dict[int, tuple[list, list]] = {}  # group -> (episodes, returns) ended
        self.ended_returns: list[float] = []  # returns of the groups completed since last read
        self.flat_groups = self.groups = 0
        self.env_steps = self.learner_steps = 0

    def collect(self, steps: int, budget: int) -> int:
        """Step every game until ``steps`` learner decisions are collected or the env-step
        ``budget`` is spent; returns the env steps taken."""
        games, vg, player = self.games, self.games.vg, self.player
        collected = taken = 0
        while collected < steps and self.env_steps < budget:
            players = games.current_players()
            finished = games.finished(players)
            if finished.size:
                self._ended(finished, vg.returns(finished)[:, player])
                self.episode[finished] = self.next_episode + np.arange(finished.size)
                self.next_episode += finished.size
                games.restart(finished, players)
            learner = np.flatnonzero(players == player)
            if learner.size:
                obs, mask = vg.tensors(learner, player)
                with torch.no_grad():
                    logits = self.net.logits(torch.as_tensor(obs), torch.as_tensor(mask))
                    actions = torch.multinomial(torch.softmax(logits, dim=-1), 1,
                                                generator=self.gen).squeeze(1)
                    logp = torch.log_softmax(logits, dim=-1).gather(
                        1, actions[:, None])[:, 0].numpy()
                acts = actions.numpy()
                self.buffer.add(episode=self.episode[learner].copy(), obs=obs, mask=mask,
                                action=acts, logp=logp, value=np.zeros(learner.size))
                vg.step(learner, acts)
                self.learner_steps += learner.size
                collected += learner.size
            games.play_members(players)
            stepped = int((players >= 0).sum())
            self.env_steps += stepped
            taken += stepped
        return taken

    def _ended(self, envs: np.ndarray, returns: np.ndarray) -> None:
        size = self.games.group_size
        for i, r in zip(envs.tolist(), returns.tolist(), strict=True):
            episodes, rets = self.waiting.setdefault(int(self.games.group[i]), ([], []))
            episodes.append(int(self.episode[i]))
            rets.append(r)
            if len(rets) == size:
                del self.waiting[int(self.games.group[i])]
                self.buffer.end(np.array(episodes), group_advantages(np.array(rets)))
                self.ended_returns.extend(rets)
                self.groups += 1
                self.flat_groups += int(np.ptp(rets) == 0)

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
    reference = copy.deepcopy(net.actor).requires_grad_(False)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5)
    learner = _GroupCollector(games, net, player, torch.Generator().manual_seed(seed))

    def meta() -> dict:
        return {"obs_shape": list(games.vg.obs_shape), "num_actions": games.vg.num_actions,
                "hidden": list(config.hidden), "ppo": config.to_dict(),
                "grpo": options.to_dict(), "seed": seed, "env_steps": learner.env_steps,
                "greedy": config.greedy, **(t.metadata or {})}

    hooks = RoundSchedule(t.rounds, games, player, config, meta)
    diagnostics: list[dict] = []
    best_return, stale = -np.inf, 0
    start = time.perf_counter()
    while learner.env_steps < config.env_steps:
        batch_start = time.perf_counter()
        used = learner.env_steps / config.env_steps
        batch_env_steps = learner.collect(config.steps_per_update, hooks.budget())
        collect_s = time.perf_counter() - batch_start
        batch = learner.buffer.take_complete()
        if batch is None:
            hooks.after_update(net, learner.env_steps)
            continue
        lr = config.learning_rate * max(0.0, 1.0 - used)
        for group in optimizer.param_groups:
            group["lr"] = lr
        stats = _grpo_update(net, reference, optimizer, batch, config, options.kl_coef, rng)
        mean_return, groups, flat = learner.read_groups()
        elapsed = time.perf_counter() - batch_start
        stats.update(update=len(diagnostics) + 1, env_steps=learner.env_steps,
                     learner_steps=learner.learner_steps, episodes=int(batch["last"].sum()),
                     groups=groups, flat_groups=flat, mean_return=mean_return,
                     learning_rate=lr, steps_per_s=batch_env_steps / max(elapsed, 1e-9),
                     rollout_steps_per_s=batch_env_steps / max(collect_s, 1e-9),
                     wall_s=time.perf_counter() - start)
        diagnostics.append(stats)
        hooks.after_update(net, learner.env_steps)
        if config.plateau_patience:
            if mean_return > best_return + config.plateau_tol:
                best_return, stale = mean_return, 0
            else:
                stale += 1
                if stale >= config.plateau_patience:
                    break
    check_trained(diagnostics, config, player)
    hooks.after_update(net, learner.env_steps, final=True)
    return NeuralPolicy(player, net, meta()), diagnostics


def _grpo_update(net: ActorCritic, reference: torch.nn.Module, optimizer, batch: dict,
                 config: PPOConfig, kl_coef: float, rng: np.random.Generator) -> dict:
    """Epochs of minibatch steps on one batch of complete groups (``batch["reward"]`` holds
    each episode's advantage at its last decision; every decision of the episode gets it)."""
    last = batch["last"]
    index = np.concatenate(([0], np.cumsum(last[:-1])))  # episode number of each decision
    adv_t = torch.as_tensor(batch["reward"][last][index], dtype=torch.float32)
    obs_t, mask_t = torch.as_tensor(batch["obs"]), torch.as_tensor(batch["mask"])
    act_t = torch.as_tensor(batch["action"])
    old_logp_t = torch.as_tensor(batch["logp"], dtype=torch.float32)
    with torch.no_grad():
        ref_logp_t = torch.log_softmax(reference(obs_t).masked_fill(~mask_t, float("-inf")),
                                       dim=-1).gather(1, act_t[:, None])[:, 0]
    size = len(act_t)
    mb = max(1, size // config.minibatches)
    params = list(net.parameters())
    measured = []  # per minibatch: approx KL, clip fraction, entropy, KL to reference, loss
    for _ in range(config.epochs):
        order = rng.permutation(size)
        for s in range(0, size, mb):
            b = torch.as_tensor(order[s:s + mb])
            obs, mask = obs_t[b], mask_t[b]
            logp_all = torch.log_softmax(net.logits(obs, mask), dim=-1)
            logp = logp_all.gather(1, act_t[b][:, None])[:, 0]
            entropy = -(logp_all.exp() * torch.where(mask, logp_all, 0.0)).sum(-1).mean()
            log_ratio = logp - old_logp_t[b]
            ratio = log_ratio.exp()
            a = adv_t[b]
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - config.clip, 1 + config.clip))
            policy_loss = pg.mean()
            ref_gap = ref_logp_t[b] - logp
            kl_ref = (ref_gap.exp() - ref_gap - 1).mean()
            loss = policy_loss + kl_coef * kl_ref - config.entropy_coef * entropy
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            optimizer.step()
            with torch.no_grad():
                measured.append(torch.stack((((ratio - 1) - log_ratio).mean(),
                                             ((ratio - 1).abs() > config.clip).float().mean(),
                                             entropy, kl_ref, policy_loss)))
    stats = torch.stack(measured)
    require_finite(net, stats, method="GRPO")
    kls, clipfracs, entropies, kl_refs, plosses = stats.T.tolist()
    return {"approx_kl": float(np.mean(kls)), "clip_fraction": float(np.mean(clipfracs)),
            "entropy": float(np.mean(entropies)), "kl_reference": float(np.mean(kl_refs)),
            "policy_loss": float(np.mean(plosses))}
