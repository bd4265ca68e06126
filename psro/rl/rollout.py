"""The batched episode engine shared by PPO training and Monte Carlo evaluation.

:class:`Rollouts` keeps ``num_envs`` games of a :class:`games.simulation.VectorGame` in
lockstep. Each seat is either played by members of that player's population, one member drawn
per episode with the meta-strategy's weights (``seats[q]`` lists the members' actors,
``weights[q]`` their weights), or left to the caller (``seats[q] is None``: the learner's
seat in PPO). The caller loops: read :meth:`current_players`, collect and :meth:`restart`
finished games, move its own seat, then :meth:`play_members` moves every drawn seat by one
action, with one batched ``action_probs`` call per (seat, member).
"""

from __future__ import annotations

import numpy as np

from games.simulation import TERMINAL, VectorGame, sample_actions


class Rollouts:
    """``num_envs`` games whose seats are played by population members drawn per episode.

    ``rng`` draws the members and samples their actions; chance outcomes come from
    ``env_seed``. With ``self_play`` p an episode's drawn seats take their newest member with
    probability p instead of a weighted draw. ``joint`` (correlated seats, JPSRO): a pair
    ``(profiles, probs)``, ``profiles`` of shape (m, num_players) holding member indices and
    ``probs`` their m probabilities; each episode then draws one row and every drawn seat takes
    that row's member (``weights`` are not used). Deterministic for given seeds.
    """

    def __init__(self, game, seats: list[list | None], weights: list[np.ndarray | None],
                 num_envs: int, rng: np.random.Generator, env_seed: int,
                 self_play: float = 0.0,
                 joint: tuple[np.ndarray, np.ndarray] | None = None):
        self.vg = VectorGame(game, num_envs, seed=env_seed)
        self.rng = rng
        self.seats = seats
        self.probs = [None if s is None or joint is not None else np.asarray(w, float) / np.sum(w)
                      for s, w in zip(seats, weights, strict=True)]
        self.joint = None if joint is None else \
            (np.asarray(joint[0], np.int64), np.asarray(joint[1], float) / np.sum(joint[1]))
        self.self_play = self_play
        self.choice = np.zeros((self.vg.num_envs, self.vg.num_players), dtype=np.int64)
        self.draw(np.arange(self.vg.num_envs))

    @property
    def num_envs(self) -> int:
        """How many games are played together."""
        return self.vg.num_envs

    def draw(self, envs: np.ndarray) -> None:
        """Draw the members of every drawn seat for new episodes in ``envs``."""
        rows = None
        if self.joint is not None:
            rows = self.rng.choice(len(self.joint[1]), size=len(envs), p=self.joint[1])
        for q, members in enumerate(self.seats):
            if members is None:
                continue
            k = len(members)
            if rows is None:
                drawn = self.rng.choice(k, size=len(envs), p=self.probs[q])
            else:
                drawn = self.joint[0][rows, q]
            if self.self_play > 0:
                drawn = np.where(self.rng.random(len(envs)) < self.self_play, k - 1, drawn)
            self.choice[envs, q] = drawn

    def current_players(self) -> np.ndarray:
        """Player to move in each game (``TERMINAL`` for finished ones)."""
        return self.vg.current_players()

    def finished(self, players: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
        """Indices of finished games (among ``active`` ones, when given)."""
        done = players == TERMINAL
        return np.flatnonzero(done if active is None else done & active)

    def restart(self, envs: np.ndarray, players: np.ndarray) -> None:
        """Start new episodes in ``envs`` (members drawn anew) and update ``players`` there."""
        if envs.size:
            self.vg.reset(envs)
            self.draw(envs)
            players[envs] = [self.vg.states[i].current_player() for i in envs]

    def play_members(self, players: np.ndarray, active: np.ndarray | None = None) -> None:
        """Advance every game whose mover is a drawn seat (and is ``active``) by one action of
        that seat's drawn member."""
        for q, members in enumerate(self.seats):
            if members is None:
                continue
            to_move = players == q
            movers = np.flatnonzero(to_move if active is None else to_move & active)
            if not movers.size:
                continue
            chosen = self.choice[movers, q]
            for k in np.unique(chosen):
                idx = movers[chosen == k]
                actor = members[k]
                obs, mask = self.vg.tensors(idx, q, getattr(actor, "observes", True))
                self.vg.step(idx, sample_actions(actor.action_probs(self.vg, idx, q, obs, mask),
                                                 self.rng))
