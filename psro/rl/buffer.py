"""The PPO learner's transitions, kept until their episodes end (:mod:`psro.rl.ppo`)."""

from __future__ import annotations

import numpy as np


class EpisodeBuffer:
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
        """One step's learner transitions: an array per field of :attr:`FIELDS`, one row per
        environment where the learner moved."""
        for key, value in arrays.items():
            self.parts[key].append(value)

    def end(self, episodes: np.ndarray, returns: np.ndarray) -> None:
        """Episodes (ids) that ended, with the learner's return in each."""
        self.ended.append(episodes)
        self.returns.append(returns)

    def take_complete(self) -> dict[str, np.ndarray] | None:
        """The transitions of every ended episode, removed from the buffer and grouped by
        episode in time order, with ``reward`` (the return at an episode's last transition,
        else 0), ``last`` and ``episode_returns``; None where no episode has ended."""
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
