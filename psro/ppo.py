"""PPO best response (CleanRL's recipe, adapted to turn-based multi-agent games).

The learner plays one seat; every other seat is played, per episode, by a population member
drawn from that player's meta-strategy ``w_k`` (or, with probability ``self_play``, its newest
member). Many games run at once (:class:`games.simulation.VectorGame`); forward passes are
batched over all environments where the learner is to move, and over the environments of each
opponent member. Only the learner's decisions are trained on; an episode's reward is the
learner's return at its end. GAE, clipped surrogate, value loss, entropy bonus, minibatch
epochs, Adam with linear learning-rate decay and gradient-norm clipping follow CleanRL's
``ppo.py``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import numpy as np
import torch

from games.simulation import TERMINAL, VectorGame
from psro.monte_carlo import play_members
from psro.neural import ActorCritic, NeuralPolicy


@dataclass
class PPOConfig:
    """PPO hyperparameters; the defaults train good best responses in Kuhn and Leduc poker."""

    env_steps: int = 60_000
    """Budget per best response in environment steps (decisions of any player)."""
    num_envs: int = 256
    """Games played at once (more amortises the per-step Python and torch overhead)."""
    steps_per_update: int = 1024
    """Learner decisions collected (in complete episodes) before each update."""
    epochs: int = 8
    """Passes over each batch."""
    minibatches: int = 4
    """Minibatches per pass."""
    learning_rate: float = 3e-3
    """Adam step size, decayed linearly to 0 over the budget."""
    gamma: float = 1.0
    """Discount (episodic games: 1)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip: float = 0.2
    """Surrogate clipping coefficient."""
    entropy_coef: float = 0.01
    """Entropy bonus weight."""
    value_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient-norm clip."""
    hidden: tuple[int, ...] = (128, 128)
    """Hidden layer widths of the actor and of the critic."""
    warm_start: bool = True
    """Start from the player's previous best response (when there is one)."""
    self_play: float = 0.0
    """Probability that an episode's opponents are their newest members instead of w_k."""
    plateau_patience: int = 0
    """Stop early after this many updates without the mean return improving (0: never)."""
    plateau_tol: float = 0.01
    """Improvement below this does not count for plateau_patience."""
    scale_returns: bool = True
    """Train on returns divided by the game's largest absolute utility (so values and value
    losses are of order 1 whatever the game's stakes; logged returns stay unscaled)."""
    greedy: bool = True
    """The new population member plays the network's most probable legal action (a pure
    strategy, as exact best responses are) instead of sampling from it. The stochastic
    network remains the warm start of the next best response. Measured on Leduc poker
    against fixed random opponents (3 seeds, 60,000 env steps): the greedy member is 0.18
    below the exact best response, the sampled one 0.29."""

    def validate(self) -> PPOConfig:
        for name in ("warm_start", "scale_returns", "greedy"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"ppo.{name} must be true or false; got "
                                 f"{getattr(self, name)!r}")
        for name in ("env_steps", "num_envs", "steps_per_update", "epochs", "minibatches"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"ppo.{name} must be a positive integer; got {value!r}")
        for name, lo, hi in (("learning_rate", 0, 1), ("gamma", 0, 1), ("gae_lambda", 0, 1),
                             ("clip", 0, 1), ("entropy_coef", 0, 10), ("value_coef", 0, 10),
                             ("max_grad_norm", 0, 1e6), ("self_play", 0, 1),
                             ("plateau_tol", 0, 1e6)):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ValueError(f"ppo.{name} must be a number in [{lo}, {hi}]; got {value!r}")
        if not isinstance(self.plateau_patience, int) or self.plateau_patience < 0:
            raise ValueError(f"ppo.plateau_patience must be a non-negative integer; got "
                             f"{self.plateau_patience!r}")
        self.hidden = tuple(int(h) for h in self.hidden)
        if not self.hidden or min(self.hidden) < 1:
            raise ValueError(f"ppo.hidden must list positive widths; got {self.hidden!r}")
        return self

    @classmethod
    def from_dict(cls, data: dict) -> PPOConfig:
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ValueError(f"unknown PPO option(s) {', '.join(unknown)}; accepted: "
                             f"{', '.join(names)}")
        data = dict(data)
        if "hidden" in data:  # a list, one width, or "64,64" from the command line
            hidden = data["hidden"]
            if isinstance(hidden, (int, float)):
                hidden = [hidden]
            elif isinstance(hidden, str):
                hidden = [h for h in hidden.replace(",", " ").split() if h]
            try:
                data["hidden"] = tuple(int(h) for h in hidden)
            except (TypeError, ValueError):
                raise ValueError(f"ppo.hidden must list layer widths, e.g. [128, 128] or "
                                 f"'128,128'; got {data['hidden']!r}") from None
        return cls(**data).validate()

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["hidden"] = list(self.hidden)
        return out


class _Buffer:
    """Learner transitions stored a step at a time as arrays (no per-row Python work).

    ``episode[t]`` identifies the episode of transition t; an episode's return is known once
    it ends. :meth:`take_complete` removes and returns the transitions of finished episodes,
    grouped by episode in time order; unfinished ones stay for the next batch.
    """

    FIELDS = ("episode", "obs", "mask", "action", "logp", "value")

    def __init__(self):
        self.parts: dict[str, list[np.ndarray]] = {k: [] for k in self.FIELDS}
        self.ended: list[np.ndarray] = []
        self.returns: list[np.ndarray] = []

    def add(self, **arrays) -> None:
        for key, value in arrays.items():
            self.parts[key].append(value)

    def end(self, episodes: np.ndarray, returns: np.ndarray) -> None:
        self.ended.append(episodes)
        self.returns.append(returns)

    def take_complete(self) -> dict[str, np.ndarray] | None:
        if not self.parts["episode"] or not self.ended:
            return None
        data = {k: np.concatenate(v) for k, v in self.parts.items()}
        ended = np.concatenate(self.ended)
        returns = np.concatenate(self.returns)
        complete = np.isin(data["episode"], ended)
        if not complete.any():
            return None
        rest = {k: v[~complete] for k, v in data.items()}
        self.parts = {k: [v] if len(v) else [] for k, v in rest.items()}
        still_open = ~np.isin(ended, data["episode"][complete])
        self.ended, self.returns = [ended[still_open]], [returns[still_open]]
        batch = {k: v[complete] for k, v in data.items()}
        order = np.argsort(batch["episode"], kind="stable")  # grouped, time order kept
        batch = {k: v[order] for k, v in batch.items()}
        lookup = dict(zip(ended.tolist(), returns.tolist(), strict=True))
        ep = batch["episode"]
        last = np.append(ep[1:] != ep[:-1], True)
        batch["reward"] = np.where(last, [lookup[e] for e in ep], 0.0)
        batch["last"] = last
        batch["episode_returns"] = np.array([lookup[e] for e in ep[last]])
        return batch


def train_best_response(game, player: int, opponents: list[list], weights: list[np.ndarray],
                        config: PPOConfig, seed: int, init: NeuralPolicy | None = None,
                        metadata: dict | None = None) -> tuple[NeuralPolicy, list[dict]]:
    """Train a PPO best response of ``player`` against the opponents' mixtures.

    ``opponents[q]`` lists player q's population members (anything with
    ``action_probs(vg, idx, player, obs, mask)``), ``weights[q]`` their meta-strategy; entry
    ``player`` is ignored. Returns the trained :class:`NeuralPolicy` and one diagnostics row per
    update (mean return, approx KL, clip fraction, entropy, explained variance, steps/s, ...).
    Deterministic for a given seed on CPU.
    """
    config.validate()
    torch.set_num_threads(1)  # small networks: one thread is fastest and reproducible
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    vg = VectorGame(game, config.num_envs, seed=seed + 1)
    net = ActorCritic(vg.obs_size, vg.num_actions, config.hidden)
    if init is not None and config.warm_start:
        net.load_state_dict(init.net.state_dict())
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate, eps=1e-5)
    n, E = vg.num_players, vg.num_envs
    scale = 1.0
    if config.scale_returns:
        scale = max(abs(game.max_utility()), abs(game.min_utility()), 1e-9)
    probs = [None if q == player else np.asarray(w, float) / np.sum(w)
             for q, w in enumerate(weights)]

    def draw(envs: np.ndarray) -> None:
        for q in range(n):
            if q == player:
                continue
            k = len(opponents[q])
            latest = rng.random(len(envs)) < config.self_play
            drawn = rng.choice(k, size=len(envs), p=probs[q])
            choice[envs, q] = np.where(latest, k - 1, drawn)

    choice = np.zeros((E, n), dtype=np.int64)
    draw(np.arange(E))
    episode = np.arange(E)  # current episode id of each environment
    next_episode = E
    buffer = _Buffer()
    diagnostics: list[dict] = []
    env_steps = learner_steps = 0
    num_updates_planned = max(1, config.env_steps // max(1, config.steps_per_update))
    best_return, stale = -np.inf, 0
    start = time.perf_counter()
    update = 0
    while env_steps < config.env_steps:
        collected = 0
        batch_start = time.perf_counter()
        batch_env_steps = 0
        while collected < config.steps_per_update and env_steps < config.env_steps:
            players = vg.current_players()
            finished = np.flatnonzero(players == TERMINAL)
            if finished.size:
                buffer.end(episode[finished].copy(), vg.returns(finished)[:, player] / scale)
                episode[finished] = next_episode + np.arange(finished.size)
                next_episode += finished.size
                vg.reset(finished)
                draw(finished)
                players[finished] = [vg.states[i].current_player() for i in finished]
            learner = np.flatnonzero(players == player)
            if learner.size:
                obs, mask = vg.tensors(learner, player)
                with torch.no_grad():
                    obs_t, mask_t = torch.as_tensor(obs), torch.as_tensor(mask)
                    logits = net.logits(obs_t, mask_t)
                    values = net.value(obs_t).numpy()
                    actions = torch.multinomial(torch.softmax(logits, dim=-1), 1,
                                                generator=gen).squeeze(1)
                    logp = torch.log_softmax(logits, dim=-1).gather(
                        1, actions[:, None])[:, 0].numpy()
                acts = actions.numpy()
                buffer.add(episode=episode[learner].copy(), obs=obs, mask=mask, action=acts,
                           logp=logp, value=values)
                vg.step(learner, acts)
                learner_steps += learner.size
                collected += learner.size
            for q in range(n):
                if q == player:
                    continue
                movers = np.flatnonzero(players == q)
                if movers.size:
                    play_members(vg, movers, q, opponents[q], choice[movers, q], rng)
            stepped = int((players >= 0).sum())
            env_steps += stepped
            batch_env_steps += stepped
        collect_s = time.perf_counter() - batch_start
        batch = buffer.take_complete()
        if batch is None:
            if env_steps >= config.env_steps:
                break
            continue
        update += 1
        lr = config.learning_rate * max(0.0, 1.0 - (update - 1) / num_updates_planned)
        for group in optimizer.param_groups:
            group["lr"] = lr
        stats = _ppo_update(net, optimizer, batch, config, rng)
        mean_return = float(batch["episode_returns"].mean()) * scale
        elapsed = time.perf_counter() - batch_start
        stats.update(update=update, env_steps=env_steps, learner_steps=learner_steps,
                     episodes=int(batch["last"].sum()), mean_return=mean_return,
                     learning_rate=lr, steps_per_s=batch_env_steps / max(elapsed, 1e-9),
                     rollout_steps_per_s=batch_env_steps / max(collect_s, 1e-9),
                     wall_s=time.perf_counter() - start)
        diagnostics.append(stats)
        if config.plateau_patience:
            if mean_return > best_return + config.plateau_tol:
                best_return, stale = mean_return, 0
            else:
                stale += 1
                if stale >= config.plateau_patience:
                    break
    meta = {"obs_shape": list(vg.obs_shape), "num_actions": vg.num_actions,
            "hidden": list(config.hidden), "ppo": config.to_dict(), "seed": seed,
            "env_steps": env_steps, "greedy": config.greedy, **(metadata or {})}
    return NeuralPolicy(player, net, meta), diagnostics


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
    obs_t = torch.as_tensor(batch["obs"])
    mask_t = torch.as_tensor(batch["mask"])
    act_t = torch.as_tensor(batch["action"])
    old_logp_t = torch.as_tensor(batch["logp"], dtype=torch.float32)
    returns_t = torch.as_tensor(adv_np + values_np, dtype=torch.float32)
    adv_t = torch.as_tensor(adv_np, dtype=torch.float32)
    size = len(act_t)
    mb = max(1, size // config.minibatches)
    kls, clipfracs, entropies, vlosses, plosses = [], [], [], [], []
    for _ in range(config.epochs):
        order = rng.permutation(size)
        for s in range(0, size, mb):
            b = torch.as_tensor(order[s:s + mb])
            logits = net.logits(obs_t[b], mask_t[b])
            logp_all = torch.log_softmax(logits, dim=-1)
            logp = logp_all.gather(1, act_t[b][:, None])[:, 0]
            p_all = logp_all.exp()
            entropy = -(p_all * torch.where(mask_t[b], logp_all, 0.0)).sum(-1).mean()
            ratio = (logp - old_logp_t[b]).exp()
            with torch.no_grad():
                kls.append(float(((ratio - 1) - (logp - old_logp_t[b])).mean()))
                clipfracs.append(float(((ratio - 1).abs() > config.clip).float().mean()))
            a = adv_t[b]
            if len(b) > 1:
                a = (a - a.mean()) / (a.std() + 1e-8)
            pg = torch.max(-a * ratio, -a * ratio.clamp(1 - config.clip, 1 + config.clip))
            policy_loss = pg.mean()
            value_loss = 0.5 * ((net.value(obs_t[b]) - returns_t[b]) ** 2).mean()
            loss = policy_loss - config.entropy_coef * entropy + config.value_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            optimizer.step()
            entropies.append(float(entropy.detach()))
            vlosses.append(float(value_loss.detach()))
            plosses.append(float(policy_loss.detach()))
    target = returns_t.numpy()
    var = np.var(target)
    explained = float("nan") if var == 0 else float(1 - np.var(target - values_np) / var)
    return {"approx_kl": float(np.mean(kls)), "clip_fraction": float(np.mean(clipfracs)),
            "entropy": float(np.mean(entropies)), "value_loss": float(np.mean(vlosses)),
            "policy_loss": float(np.mean(plosses)), "explained_variance": explained}
