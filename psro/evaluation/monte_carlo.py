"""Monte Carlo payoffs for games too large to walk: batched simulation with confidence
intervals and adaptive sample counts, on the shared episode engine (:mod:`psro.rl.rollout`).

Each seat is played by *actors* (see :mod:`psro.extensive_form.members`); episodes run ``num_envs``
at a time, with one batched forward pass per (seat, actor) group at every step.
"""

from typing import NamedTuple

import numpy as np

from psro.rl.rollout import Rollouts

Z95 = 1.959963984540054


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
             num_envs: int = 256) -> tuple[np.ndarray, np.ndarray, int]:
    """Play ``episodes`` episodes; at each episode start, seat q's actor is drawn from
    ``seats[q]`` with probabilities ``weights[q]``. Returns per-player sums of returns, sums of
    squared returns, and the episode count (exactly ``episodes``)."""
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
             tolerance: float = 0.02, min_episodes: int = 256, max_episodes: int = 8192,
             batch: int = 256) -> Estimate:
    """Simulate until every player's 95% half-width is at most ``tolerance`` (after at least
    ``min_episodes``) or ``max_episodes`` is reached. Deterministic for a given seed."""
    n = len(seats)
    total, total_sq, count = np.zeros(n), np.zeros(n), 0
    round_ = 0
    while True:
        size = min_episodes if count == 0 else min(batch, max_episodes - count)
        s, sq, c = simulate(game, seats, weights, size, seed + 7919 * round_)
        total, total_sq, count = total + s, total_sq + sq, count + c
        round_ += 1
        mean = total / count
        var = np.maximum(total_sq / count - mean ** 2, 0.0) * count / max(count - 1, 1)
        se = np.sqrt(var / count)
        if np.all(Z95 * se <= tolerance) or count >= max_episodes:
            return Estimate(mean, se, count)


def estimate_profile(game, actors: list, seed: int, **options) -> Estimate:
    """:func:`estimate` for one pure profile (one actor per seat); ``options`` are those of
    :func:`estimate`."""
    return estimate(game, [[a] for a in actors], [np.ones(1) for _ in actors], seed, **options)
