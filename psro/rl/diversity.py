"""Diverse PSRO's best-response objective for PPO: reward weights per opponent member."""

from __future__ import annotations

import numpy as np


class DiversityWeights:
    """Diverse PSRO's objective for PPO (:class:`psro.oracles.DiversityTerm`): per-episode
    reward factors by opponent member.

    The objective is ``sum_j w_j r_j / s + weight * E|Y|([M; r] / s)`` over the returns ``r_j``
    against the opponent's members j. Linearised at the current estimate of ``r``, its
    gradient is that of ``sum_j c_j r_j / s`` (:meth:`DiversityTerm.weights`), whose policy
    gradient is the one of episodes against member j drawn with probability ``q_j`` whose
    reward is multiplied by ``c_j / q_j``. Members are drawn from ``q = (1 - EXPLORE) w +
    EXPLORE / K``, so that every member is played (the term values returns against members
    outside the meta-strategy's support too). The estimate of ``r`` starts at the payoff row of
    the player's newest member (where a warm start begins) and moves towards each batch's
    mean return against each member, by ``n_j / SMOOTHING`` of the gap for ``n_j`` episodes
    (at most all of it)."""

    EXPLORE = 0.5
    SMOOTHING = 32

    def __init__(self, term, mixture: np.ndarray):
        self.term = term
        self.mixture = np.asarray(mixture, float) / np.sum(mixture)
        self.sampling = (1 - self.EXPLORE) * self.mixture + self.EXPLORE / len(self.mixture)
        self.row = np.array(term.rows[-1], float)
        self.factors = term.weights(self.row, self.mixture) / self.sampling

    def reweight(self, batch: dict, opponent_of: dict[int, int], scale: float) -> dict:
        """Reweight the batch's terminal rewards by their episodes' opponents (taken from
        ``opponent_of``, episode id -> member), then update the estimate of the returns against
        each member (``scale``: PPO's return scale); returns :meth:`stats`."""
        last = batch["last"]
        opponents = np.array([opponent_of.pop(e) for e in batch["episode"][last].tolist()])
        batch["reward"][last] = batch["reward"][last] * self.factors[opponents]
        returns = batch["episode_returns"] * scale
        for j in np.unique(opponents):
            played = opponents == j
            step = min(1.0, played.sum() / self.SMOOTHING)
            self.row[j] += step * (returns[played].mean() - self.row[j])
        self.factors = self.term.weights(self.row, self.mixture) / self.sampling
        return self.stats()

    def stats(self) -> dict:
        """The objective and the meta-strategy's return at the current estimate."""
        return {"diversity_objective": self.term.value(self.row, self.mixture),
                "meta_return": float(self.mixture @ self.row)}


def opponent_draws(training) -> tuple[DiversityWeights | None, list]:
    """For a :class:`psro.rl.config.Training`: the diversity objective's weights (None
    without ``training.diversity``) and the weights each opponent seat's members are drawn
    with (None for the learner's seat)."""
    diversity = training.diversity and DiversityWeights(
        training.diversity, training.weights[1 - training.player])
    return diversity, [None if q == training.player else
                       diversity.sampling if diversity else w
                       for q, w in enumerate(training.weights)]
