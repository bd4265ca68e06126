"""Monte Carlo payoffs for games too large to walk: batched simulation with confidence
intervals and adaptive sample counts, on the shared episode engine (:mod:`psro.rl.rollout`).

Each seat is played by *actors* (see :mod:`psro.extensive_form.members`); episodes run ``num_envs``
at a time, with one batched forward pass per (seat, actor) group at every step.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from psro.rl.networks import one_thread
from psro.rl.rollout import Rollouts

Z95 = 1.959963984540054
ESTIMATE_DEFAULTS = {"tolerance": 0.02, "min_episodes": 256, "max_episodes": 8192, "batch": 256}
"""The options of :func:`estimate` and their defaults."""


class Estimate(NamedTuple):
    """Per-player mean return, its standard error and the number of episodes behind it."""

    mean: np.ndarray
    std_err: np.ndarray
    count: int

    @property
    def half_width(self) -> np.ndarray:
        """Half-width of the 95% normal confidence interval, per player."""
        return Z95 * self.std_err


def simulate(game, seats: list[list], weights: list[np.ndarray], episodes: int, seed: int,
             num_envs: int = 256, ended: Callable[[list], None] | None = None
             ) -> tuple[np.ndarray, np.ndarray, int]:
    """Play ``episodes`` episodes; at each episode start, seat q's actor is drawn from
    ``seats[q]`` with probabilities ``weights[q]``. Returns per-player sums of returns, sums of
    squared returns, and the episode count (exactly ``episodes``). Networks act on one torch
    thread (:func:`psro.rl.networks.one_thread`). ``ended``: called with the list of pyspiel
    states that have just finished (terminal, before they are replaced), for callers that read
    more of an episode than its returns."""
    with one_thread():
        return _simulate(game, seats, weights, episodes, seed, num_envs, ended)


def _simulate(game, seats: list[list], weights: list[np.ndarray], episodes: int, seed: int,
              num_envs: int, ended_hook: Callable[[list], None] | None = None
              ) -> tuple[np.ndarray, np.ndarray, int]:
    games = Rollouts(game, seats, weights, min(num_envs, episodes),
                     rng=np.random.default_rng(seed), env_seed=seed + 1)
    n = len(seats)
    started = games.num_envs
    finished_count = 0
    active = np.ones(games.num_envs, dtype=bool)
    total = np.zeros(n)
    total_sq = np.zeros(n)
    while finished_count < episodes:
        players = games.current_players()
        ended = games.finished(players, active)
        if ended.size:
            rets = games.vg.returns(ended)
            if ended_hook is not None:
                ended_hook([games.vg.states[i] for i in ended])
            total += rets.sum(axis=0)
            total_sq += (rets ** 2).sum(axis=0)
            finished_count += ended.size
            more = min(ended.size, episodes - started)
            restart, stop = ended[:more], ended[more:]
            active[stop] = False
            started += more
            games.restart(restart, players)
        games.play_members(players, active)
    return total, total_sq, finished_count


def estimate(game, seats: list[list], weights: list[np.ndarray], seed: int,
             tolerance: float = ESTIMATE_DEFAULTS["tolerance"],
             min_episodes: int = ESTIMATE_DEFAULTS["min_episodes"],
             max_episodes: int = ESTIMATE_DEFAULTS["max_episodes"],
             batch: int = ESTIMATE_DEFAULTS["batch"], start: Estimate | None = None) -> Estimate:
    """Simulate until every player's 95% half-width is at most ``tolerance`` (after at least
    ``min_episodes``) or ``max_episodes`` is reached. Deterministic for a given seed.

    ``start``: an earlier estimate of the same profile to continue (its episodes count
    towards ``min_episodes`` and ``max_episodes``; the new episodes are pooled with it, so
    the result is what one estimate over all the episodes gives, up to float rounding).
    Give a seed that its own episodes did not use."""
    n = len(seats)
    total, total_sq, count = np.zeros(n), np.zeros(n), 0
    if start is not None and start.count > 0:
        total, total_sq, count = _sums(start)
    round_ = 0
    while True:
        if count >= max_episodes:
            return Estimate(*_moments(total, total_sq, count), count)
        size = min(max(min_episodes - count, batch if count else min_episodes),
                   max_episodes - count)
        s, sq, c = simulate(game, seats, weights, size, seed + 7919 * round_)
        total, total_sq, count = total + s, total_sq + sq, count + c
        round_ += 1
        mean, se = _moments(total, total_sq, count)
        if (np.all(Z95 * se <= tolerance) and count >= min_episodes) or count >= max_episodes:
            return Estimate(mean, se, count)


def _moments(total: np.ndarray, total_sq: np.ndarray, count: int) -> tuple[np.ndarray,
                                                                            np.ndarray]:
    """Mean and standard error (from the unbiased variance) of ``count`` returns."""
    mean = total / count
    var = np.maximum(total_sq / count - mean ** 2, 0.0) * count / max(count - 1, 1)
    return mean, np.sqrt(var / count)


def _sums(estimate_: Estimate) -> tuple[np.ndarray, np.ndarray, int]:
    """The sums of returns and of squared returns behind an estimate (its inverse of
    :func:`_moments`)."""
    n = estimate_.count
    mean, se = np.asarray(estimate_.mean, float), np.asarray(estimate_.std_err, float)
    var = se ** 2 * n
    return mean * n, (var * max(n - 1, 1) / n + mean ** 2) * n, n


def estimate_profile(game, actors: list, seed: int, **options) -> Estimate:
    """:func:`estimate` for one pure profile (one actor per seat); ``options`` are those of
    :func:`estimate` (``start`` included)."""
    return estimate(game, [[a] for a in actors], [np.ones(1) for _ in actors], seed, **options)


def estimate_options(options: dict) -> dict:
    """The keys of a ``monte_carlo`` options table that :func:`estimate` reads (the others,
    such as ``refine`` and ``iteration_episodes``, are for filling payoff tables)."""
    return {k: v for k, v in options.items() if k in ESTIMATE_DEFAULTS}
