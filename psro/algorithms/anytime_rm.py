"""Anytime PSRO with trained best responses: the restricted distribution by regret matching
against best responses (RM-BR, McAleer et al. 2022), for games whose payoffs are sampled.

Anytime PSRO's meta-strategy is, for each player p, the mixture of p's population that is
least exploitable in the *full* game. Where the game is walked, :mod:`psro.algorithms` finds
it exactly by one LP. Where it is not (or where asked, with ``anytime_rounds``), it is found as
the paper does for deep RL: while the opponent q's new PPO best response trains (one run of
``ppo.env_steps`` steps, against episodes whose p-member is drawn from ``sigma``), p's
restricted distribution ``sigma`` over its population is updated by regret matching+ at the
end of each of ``R`` equal parts of the budget, against q's network as it stands then: p's
return with each member against that network is estimated by Monte Carlo (the run's
``monte_carlo`` options) and each member's regret grows by how much better it did than
``sigma``. The restricted distribution is the average of the rounds' ``sigma``; q's trained
network joins q's population.

Guarantee (exact best responses and payoffs): the average's worst-case value is within the
average regret, ``range * sqrt(K / R)`` for K members, of the least exploitable mixture's; with
PPO and sampled payoffs the best responses' shortfall and the sampling error add to it, so
exploitability is not guaranteed to fall at every iteration (it is with the exact LP).
"""

from __future__ import annotations

import numpy as np

from psro.algorithms.base import Algorithm
from psro.evaluation import monte_carlo
from psro.extensive_form.members import Keys
from psro.oracles.spec import RoundHook, Target
from psro.rl.config import Training
from psro.seeds import derive_seed
from psro.state import RunState

DEFAULT_ROUNDS = 10
"""Regret-matching rounds per iteration where the game is too large to walk and
``anytime_rounds`` is not set."""
REGRET_MATCHING_SETTINGS = ("anytime_rounds", "anytime_episodes")
"""The RunConfig fields of anytime by regret matching; setting either asks for it on a walked
game."""


class RegretMatching:
    """Regret matching+ of the restricted player against best responses.

    ``sigma`` is the current mixture over the player's K members (``start`` first). After the
    opponent's response to ``sigma``, :meth:`observe` takes the player's payoff of each member
    against it: each member's regret grows by its payoff minus ``sigma``'s and is floored at 0,
    and the next ``sigma`` is proportional to the regrets (unchanged while all are 0, when no
    member did better). ``average`` is the uniform average of the mixtures played; ``values``
    each round's value of ``sigma`` against its response. With exact best responses and
    payoffs in a range of width D, the average's worst-case value is at most ``D sqrt(K / T)``
    below the best mixture's after T rounds (regret matching+'s regret bound).
    """

    def __init__(self, start: np.ndarray):
        self.sigma = np.asarray(start, dtype=float)
        self.regrets = np.zeros_like(self.sigma)
        self.total = np.zeros_like(self.sigma)
        self.values: list[float] = []

    def observe(self, payoffs: np.ndarray) -> np.ndarray:
        """Record the round's payoffs (1-D, one per member); returns the next ``sigma``."""
        payoffs = np.asarray(payoffs, dtype=float)
        value = float(self.sigma @ payoffs)
        self.total += self.sigma
        self.values.append(value)
        self.regrets = np.maximum(self.regrets + payoffs - value, 0.0)
        if self.regrets.sum() > 0:
            self.sigma = self.regrets / self.regrets.sum()
        return self.sigma

    @property
    def average(self) -> np.ndarray:
        """The uniform average of the mixtures played so far."""
        return self.total / max(len(self.values), 1)


class RegretMatchingRounds:
    """The round hook of a regret-matching target (a :class:`~psro.oracles.spec.RoundHook`
    observer, built in the worker): while ``training.player``'s PPO best response trains, the
    other player's restricted distribution over its members (starting from its weights) is
    updated by :class:`RegretMatching` after each round, against the network as it stands
    then (the other player's payoff of each member against it estimated by Monte Carlo with
    ``options``, :func:`psro.evaluation.monte_carlo.estimate_profile`'s, each estimate seeded
    from the training's seed, the round and the member). Two-player games. Its metadata:
    ``restricted`` (the average mixture, a list), ``restricted_value`` (the mean of the
    rounds' values) and ``round_episodes`` (the episodes the estimates simulated)."""

    def __init__(self, training: Training, options: dict):
        self.training, self.options = training, options
        self.other = 1 - training.player
        self.matching = RegretMatching(training.weights[self.other])
        self.episodes = 0

    def after_round(self, round_: int, network) -> np.ndarray:
        """The other player's new weights after round ``round_``."""
        t, payoffs = self.training, []
        for k, actor in enumerate(t.opponents[self.other]):
            actors = [network, network]
            actors[self.other] = actor
            estimate = monte_carlo.estimate_profile(
                t.game, actors, derive_seed(t.seed, round_, k, 1), **self.options)
            payoffs.append(estimate.mean[self.other])
            self.episodes += estimate.count
        return self.matching.observe(np.array(payoffs))

    def metadata(self) -> dict:
        """What the trained network (and its member) records."""
        return {Keys.RESTRICTED: self.matching.average.tolist(),
                Keys.RESTRICTED_VALUE: float(np.mean(self.matching.values)),
                Keys.ROUND_EPISODES: self.episodes}


def anytime_reads(config, evaluation: str) -> tuple[str, ...]:
    """Anytime by regret matching (rounds or episodes set, or a game too large to walk)
    estimates each round's member values by Monte Carlo."""
    return ("monte_carlo", "seed") \
        if asked_setting(config) is not None or evaluation == "sampled" else ()


def asked_setting(config) -> str | None:
    """The setting that asks for regret matching on a walked game (``anytime_rounds`` or
    ``anytime_episodes``) where the config sets one, else None."""
    return next((name for name in REGRET_MATCHING_SETTINGS
                 if getattr(config, name) is not None), None)


def padded(mixture, size: int) -> np.ndarray:
    """``mixture`` extended with zero weight for members added after it was computed."""
    out = np.zeros(size)
    out[:len(mixture)] = mixture
    return out


def _newest_response(state: RunState, player: int):
    """The opponent's newest member trained with regret matching over ``player``'s members
    (its metadata holds ``player``'s restricted mixture and value), or None."""
    return next((m for m in reversed(state.populations[1 - player])
                 if Keys.RESTRICTED in m.metadata), None)


class RegretMatchingAnytime(Algorithm):
    """Anytime PSRO by regret matching against trained best responses (module docstring).

    The meta-strategy of player p is the restricted distribution that regret matching found
    while p's opponent trained its newest best response (members added since have weight 0);
    each iteration's targets train against the current meta-strategy with ``rounds`` rounds.
    Two-player zero-sum games, PPO oracle."""

    name = "anytime"

    def __init__(self, rounds: int, options: dict | None = None):
        self.rounds = rounds
        self.hook = RoundHook(rounds, RegretMatchingRounds, dict(options or {}),
                              carries=(Keys.RESTRICTED, Keys.RESTRICTED_VALUE,
                                        Keys.ROUND_EPISODES))

    def meta(self, state: RunState) -> list[np.ndarray]:
        """Each player's newest restricted distribution (uniform before the first)."""
        out = []
        for p, population in enumerate(state.populations):
            newest = _newest_response(state, p)
            size = len(population)
            out.append(np.full(size, 1.0 / size) if newest is None
                       else padded(newest.metadata[Keys.RESTRICTED], size))
        return out

    def targets(self, state: RunState) -> list[Target]:
        """One target per player against the meta-strategy, trained in ``rounds`` rounds."""
        return [Target(p, tuple(state.mixtures), round_hook=self.hook) for p in range(2)]

    def columns(self, num_players: int) -> tuple[str, ...]:
        """The keys of :meth:`metrics`."""
        return tuple(f"{key}_p{p}" for p in range(2)
                     for key in ("restricted_value", "round_episodes"))

    def metrics(self, state: RunState) -> dict:
        """``restricted_value_p{p}``: the mean over the last iteration's rounds of p's
        estimated value of its restricted mixture against the opponent's response;
        ``round_episodes_p{p}``: the episodes those rounds simulated to estimate p's members
        (None in a run from before they were counted)."""
        out = {}
        for p in range(2):
            newest = _newest_response(state, p)
            meta = {} if newest is None else newest.metadata
            out[f"restricted_value_p{p}"] = meta.get(Keys.RESTRICTED_VALUE)
            out[f"round_episodes_p{p}"] = meta.get(Keys.ROUND_EPISODES)
        return out


__all__ = ["DEFAULT_ROUNDS", "RegretMatching", "RegretMatchingAnytime", "RegretMatchingRounds",
           "anytime_reads", "padded"]
