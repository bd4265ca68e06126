"""PPO hyperparameters (no torch here, so configs validate without importing it)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from psro.errors import ConfigError, UnreadSettingError

MAX_ENVS = 65_536
"""Most games PPO plays at once (each is a live pyspiel state in memory)."""
MAX_WIDTH = 16_384
"""Widest hidden layer (two such layers already hold 268M weights, about 1 GB)."""


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
    """Adam step size, decayed linearly to 0 with the fraction of env_steps spent."""
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
        """Check every option's type and range (:class:`ConfigError` naming it); returns self."""
        for name in ("warm_start", "scale_returns", "greedy"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"ppo.{name} must be true or false; got "
                                 f"{getattr(self, name)!r}")
        for name, most in (("env_steps", 10**12), ("num_envs", MAX_ENVS),
                           ("steps_per_update", 10**9), ("epochs", 10**4),
                           ("minibatches", 10**6)):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise ConfigError(f"ppo.{name} must be an integer from 1 to {most:,}; got "
                                  f"{value!r}")
        for name, lo, hi in (("learning_rate", 0, 1), ("gamma", 0, 1), ("gae_lambda", 0, 1),
                             ("clip", 0, 1), ("entropy_coef", 0, 10), ("value_coef", 0, 10),
                             ("max_grad_norm", 0, 1e6), ("self_play", 0, 1),
                             ("plateau_tol", 0, 1e6)):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not lo <= value <= hi:
                raise ConfigError(f"ppo.{name} must be a number in [{lo}, {hi}]; got {value!r}")
        if not isinstance(self.plateau_patience, int) or self.plateau_patience < 0:
            raise ConfigError(f"ppo.plateau_patience must be a non-negative integer; got "
                             f"{self.plateau_patience!r}")
        if self.plateau_patience == 0 and self.plateau_tol != PPOConfig.plateau_tol:
            raise UnreadSettingError("ppo.plateau_tol has no effect while ppo.plateau_patience "
                                     "is 0 (training never stops early); set plateau_patience "
                                     "too, or leave plateau_tol unset", "ppo.plateau_tol")
        self.hidden = tuple(int(h) for h in self.hidden)
        if not self.hidden or min(self.hidden) < 1 or max(self.hidden) > MAX_WIDTH \
                or len(self.hidden) > 16:
            raise ConfigError(f"ppo.hidden must list 1 to 16 widths from 1 to {MAX_WIDTH:,}; "
                              f"got {list(self.hidden)!r}")
        return self

    @classmethod
    def from_dict(cls, data: dict) -> PPOConfig:
        """Options from a mapping; unknown keys are a :class:`ConfigError`."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ConfigError(f"unknown PPO option(s) {', '.join(unknown)}; accepted: "
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
                raise ConfigError(f"ppo.hidden must list layer widths, e.g. [128, 128] or "
                                 f"'128,128'; got {data['hidden']!r}") from None
        return cls(**data).validate()

    def to_dict(self) -> dict:
        """Every option with its value (defaults included)."""
        out = dataclasses.asdict(self)
        out["hidden"] = list(self.hidden)
        return out


@dataclass
class GRPOOptions:
    """The GRPO oracle's own options (``oracle_options``); the rest of its training (budget,
    games at once, batch, epochs, minibatches, learning rate, clip, entropy bonus, gradient
    clip, network, warm start, self-play, plateau, greedy members) is read from the ``ppo``
    table, whose critic options (``gamma``, ``gae_lambda``, ``value_coef``,
    ``scale_returns``) it has no use for (:data:`PPO_CRITIC_OPTIONS`)."""

    group_size: int = 8
    """G, episodes per group (2 to 1,024; must divide ``ppo.num_envs``): each group shares its
    chance outcomes and opponent draw, and its episodes' advantages are their returns minus
    the group's mean, over the group's standard deviation."""
    kl_coef: float = 0.04
    """Weight of the KL penalty to the policy the response started from (0 to 10;
    DeepSeekMath's 0.04)."""

    def validate(self, ppo: PPOConfig | None = None) -> GRPOOptions:
        """Check both options' types and ranges, and that ``group_size`` divides
        ``ppo.num_envs`` (:class:`ConfigError` naming the option); returns self."""
        g = self.group_size
        if not isinstance(g, int) or isinstance(g, bool) or not 2 <= g <= 1024:
            raise ConfigError(f"oracle_options.group_size must be an integer from 2 to 1,024; "
                              f"got {g!r}")
        if not isinstance(self.kl_coef, (int, float)) or isinstance(self.kl_coef, bool) \
                or not 0 <= self.kl_coef <= 10:
            raise ConfigError(f"oracle_options.kl_coef must be a number in [0, 10]; got "
                              f"{self.kl_coef!r}")
        if ppo is not None and ppo.num_envs % g:
            raise ConfigError(f"oracle_options.group_size ({g}) must divide ppo.num_envs "
                              f"({ppo.num_envs:,}): the games played at once are split into "
                              f"groups; give num_envs a multiple of {g}")
        return self

    @classmethod
    def from_dict(cls, data: dict) -> GRPOOptions:
        """Options from a mapping; unknown keys are a :class:`ConfigError` listing the
        accepted ones."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ConfigError(f"unknown grpo option(s) {', '.join(unknown)} in oracle_options; "
                              f"accepted: {', '.join(names)}")
        return cls(**data)

    def to_dict(self) -> dict:
        """Both options with their values."""
        return dataclasses.asdict(self)


PPO_CRITIC_OPTIONS = ("gamma", "gae_lambda", "value_coef", "scale_returns")
"""PPO options that only a critic reads (discounted returns, GAE, the value loss, the return
scale of the value targets): refused by critic-free oracles where set."""


RESPONSE_DEFAULTS = {"env_steps": 400_000, "entropy_coef": 0.2}
"""The PPO options of the best responses that measure approximate exploitability (a lower
bound) where they differ from :class:`PPOConfig`'s. They are the same for every run and method,
whatever PPO options a run's own oracle uses, so that bounds of two methods are comparable.
Both were chosen where the truth is known (docs, "Lower-bound benchmark"): a large entropy bonus
keeps a long best response exploring (the response still plays its most probable action), which
took Leduc's bound at 400,000 steps from 0.52 of the exact value (entropy 0.01) to 0.93."""


def response_config(options: dict | None = None) -> PPOConfig:
    """The PPO options of a lower bound's best responses: :data:`RESPONSE_DEFAULTS` over
    :class:`PPOConfig`'s defaults, then ``options`` (any PPO option, ``env_steps`` the budget);
    :class:`ConfigError` for an unknown or bad option."""
    return PPOConfig.from_dict({**RESPONSE_DEFAULTS, **(options or {})})


@dataclass(frozen=True)
class Training:
    """One PPO best response to train (plain data, so it pickles to a worker).

    ``player`` trains against ``opponents[q]``, player q's members' actors (see
    :mod:`psro.extensive_form.members`), drawn per episode by ``weights[q]`` (entry ``player``
    ignored), or, with ``joint`` = ``(profiles, probs)``, by correlated profiles as
    :class:`psro.rl.rollout.Rollouts` takes them. ``init``: the network to start from (with
    ``config.warm_start``); ``metadata``: added to the network's; ``rounds = (R, hook)``: the
    budget cut into R rounds, ``hook(r, policy)`` returning the other player's new weights
    after round r (:func:`psro.rl.ppo.train_best_response`); ``diversity``: a
    :class:`psro.oracles.DiversityTerm` added to the objective (two-player games; see
    :func:`psro.rl.ppo.train`)."""

    game: object
    player: int
    opponents: list
    weights: list
    config: PPOConfig
    seed: int
    init: object = None
    metadata: dict | None = None
    joint: tuple | None = None
    rounds: tuple | None = None
    diversity: object = None
