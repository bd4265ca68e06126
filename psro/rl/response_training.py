"""What the policy-gradient best responses (PPO, :mod:`psro.rl.ppo`; GRPO, :mod:`psro.rl.grpo`)
share around their updates: the learner's play in the rollouts, the loop of collections and
updates, the round schedule of a round hook, the warm start, and the checks that keep an
untrained or diverged network out of the population."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

from psro.errors import ConfigError, TrainingError
from psro.rl.buffer import EpisodeBuffer
from psro.rl.config import PPOConfig
from psro.rl.networks import ActorCritic, NeuralPolicy
from psro.rl.rollout import Rollouts


class Collector:
    """Plays the learner's seat in the shared rollouts and fills the buffer, counting steps.

    An ended episode goes to the buffer with the learner's return over ``scale``
    (:meth:`episodes_ended`; with ``record_opponents``, its opponent member is kept by episode
    id in :attr:`opponent_of`), and each decision with the critic's value
    (:meth:`values`). Subclasses change either."""

    def __init__(self, games: Rollouts, net: ActorCritic, player: int, gen: torch.Generator,
                 scale: float = 1.0, record_opponents: bool = False):
        self.games, self.net, self.player, self.scale, self.gen = games, net, player, scale, gen
        self.buffer = EpisodeBuffer()
        self.episode = np.arange(games.num_envs)  # current episode id of each environment
        self.next_episode = games.num_envs
        self.opponent_of = {} if record_opponents else None  # episode id -> opponent member
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
                self.episodes_ended(finished, vg.returns(finished)[:, player])
                self.episode[finished] = self.next_episode + np.arange(finished.size)
                self.next_episode += finished.size
                games.restart(finished, players)
            learner = np.flatnonzero(players == player)
            if learner.size:
                obs, mask = vg.tensors(learner, player)
                with torch.no_grad():
                    obs_t, mask_t = torch.as_tensor(obs), torch.as_tensor(mask)
                    logits = self.net.logits(obs_t, mask_t)
                    values = self.values(obs_t)
                    actions = torch.multinomial(torch.softmax(logits, dim=-1), 1,
                                                generator=self.gen).squeeze(1)
                    logp = torch.log_softmax(logits, dim=-1).gather(
                        1, actions[:, None])[:, 0].numpy()
                acts = actions.numpy()
                self.buffer.add(episode=self.episode[learner].copy(), obs=obs, mask=mask,
                                action=acts, logp=logp, value=values)
                vg.step(learner, acts)
                self.learner_steps += learner.size
                collected += learner.size
            games.play_members(players)
            stepped = int((players >= 0).sum())
            self.env_steps += stepped
            taken += stepped
        return taken

    def episodes_ended(self, envs: np.ndarray, returns: np.ndarray) -> None:
        """The episodes now in ``envs`` ended with the learner's ``returns``."""
        self.buffer.end(self.episode[envs].copy(), returns / self.scale)
        if self.opponent_of is not None:
            self.opponent_of.update(zip(self.episode[envs].tolist(), self.games.choice[
                envs, 1 - self.player].tolist(), strict=True))

    def values(self, obs: torch.Tensor) -> np.ndarray:
        """What the buffer keeps as each decision's value: the critic's."""
        return self.net.value(obs).numpy()


def training_loop(learner: Collector, hooks: RoundSchedule, net: ActorCritic, optimizer,
                  config: PPOConfig, player: int, update: Callable[[dict], dict]) -> list[dict]:
    """Collect ``config.steps_per_update`` learner decisions (in complete episodes) and call
    ``update(batch)`` (which returns its diagnostics, ``mean_return`` among them) until the
    env-step budget is spent or the mean return plateaus; the learning rate falls linearly with
    the fraction of the budget spent before each batch, and the round hook is called where
    rounds end. Returns one diagnostics row per update; :class:`ConfigError` where no update
    was made."""
    diagnostics: list[dict] = []
    best_return, stale = -np.inf, 0
    start = time.perf_counter()
    while learner.env_steps < config.env_steps:
        batch_start = time.perf_counter()
        used = learner.env_steps / config.env_steps  # budget fraction spent before this batch
        batch_env_steps = learner.collect(config.steps_per_update, hooks.budget())
        collect_s = time.perf_counter() - batch_start
        batch = learner.buffer.take_complete()
        if batch is None:
            hooks.after_update(net, learner.env_steps)
            continue
        lr = config.learning_rate * max(0.0, 1.0 - used)
        for group in optimizer.param_groups:
            group["lr"] = lr
        stats = update(batch)
        elapsed = time.perf_counter() - batch_start
        stats.update(update=len(diagnostics) + 1, env_steps=learner.env_steps,
                     learner_steps=learner.learner_steps, episodes=int(batch["last"].sum()),
                     learning_rate=lr, steps_per_s=batch_env_steps / max(elapsed, 1e-9),
                     rollout_steps_per_s=batch_env_steps / max(collect_s, 1e-9),
                     wall_s=time.perf_counter() - start)
        diagnostics.append(stats)
        hooks.after_update(net, learner.env_steps)
        if config.plateau_patience:
            if stats["mean_return"] > best_return + config.plateau_tol:
                best_return, stale = stats["mean_return"], 0
            else:
                stale += 1
                if stale >= config.plateau_patience:
                    break
    check_trained(diagnostics, config, player)
    hooks.after_update(net, learner.env_steps, final=True)
    return diagnostics


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


LossFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor],
                  tuple[torch.Tensor, torch.Tensor]]
"""``loss(b, obs, logp, policy_loss, entropy) -> (loss, extra)``: a method's loss on the
minibatch ``b`` (indices into the batch) from its clipped policy loss and entropy, and one
number of its own to record (PPO: the value loss; GRPO: the KL divergence to the reference)."""


def clipped_policy_epochs(net: ActorCritic, optimizer, batch: dict, advantages: torch.Tensor,
                          config: PPOConfig, rng: np.random.Generator, loss: LossFn,
                          normalise: bool, method: str) -> list[list[float]]:
    """``config.epochs`` passes over one batch in ``config.minibatches`` shuffled minibatches,
    each a step of ``optimizer`` on ``loss`` built from PPO's clipped surrogate: the ratio of
    the new to the old probability (``batch["logp"]``) of each action, clipped to 1 +- clip,
    times the decision's advantage (normalised within the minibatch where ``normalise``), with
    the gradient's norm clipped to ``max_grad_norm``. Returns, per minibatch, the approximate
    KL divergence to the old policy, the clipped fraction, the entropy, the loss's own number
    and the policy loss, as five lists; :class:`TrainingError` (naming ``method``) where a loss
    or weight is not finite."""
    obs_t, mask_t = torch.as_tensor(batch["obs"]), torch.as_tensor(batch["mask"])
    act_t = torch.as_tensor(batch["action"])
    old_logp_t = torch.as_tensor(batch["logp"], dtype=torch.float32)
    size = len(act_t)
    mb = max(1, size // config.minibatches)
    params = list(net.parameters())
    measured = []
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
            a = advantages[b]
            if normalise and len(b) > 1:
                a = (a - a.mean()) / (a.std() + 1e-8)
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - config.clip, 1 + config.clip))
            policy_loss = pg.mean()
            total, extra = loss(b, obs, logp, policy_loss, entropy)
            optimizer.zero_grad()
            total.backward()
            torch.nn.utils.clip_grad_norm_(params, config.max_grad_norm)
            optimizer.step()
            with torch.no_grad():  # read once after the epochs, not one sync per number
                measured.append(torch.stack((((ratio - 1) - log_ratio).mean(),
                                             ((ratio - 1).abs() > config.clip).float().mean(),
                                             entropy, extra, policy_loss)))
    stats = torch.stack(measured)
    require_finite(net, stats, method=method)
    return stats.T.tolist()


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
