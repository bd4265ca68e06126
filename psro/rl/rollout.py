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
        drawn = self.drawn(len(envs))
        for q, members in enumerate(self.seats):
            if members is not None:
                self.choice[envs, q] = drawn[:, q]

    def drawn(self, count: int) -> np.ndarray:
        """``count`` fresh draws, shape (count, num_players): a member index per drawn seat
        (0 in the caller's seats)."""
        out = np.zeros((count, self.vg.num_players), dtype=np.int64)
        rows = None
        if self.joint is not None:
            rows = self.rng.choice(len(self.joint[1]), size=count, p=self.joint[1])
        for q, members in enumerate(self.seats):
            if members is None:
                continue
            k = len(members)
            if rows is None:
                picked = self.rng.choice(k, size=count, p=self.probs[q])
            else:
                picked = self.joint[0][rows, q]
            if self.self_play > 0:
                picked = np.where(self.rng.random(count) < self.self_play, k - 1, picked)
            out[:, q] = picked
        return out

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


class GroupedRollouts(Rollouts):
    """:class:`Rollouts` whose episodes come in groups of ``group_size`` G that share their
    drawn members and their chance outcomes (GRPO's groups, :mod:`psro.rl.grpo`).

    Environments ``gG .. gG+G-1`` form slot g; the k-th episode each of them plays belongs to
    group ``(g, k)``, whose members and chance seed are drawn from ``rng`` when the first of them
    starts it. Every episode of a group draws the same uniform numbers at its chance nodes
    (:meth:`games.simulation.VectorGame.reset`), so all are dealt the same outcomes wherever
    their chance nodes offer the same ones (always, in games whose chance outcomes do not depend
    on the players' moves). The environments of a slot run on without waiting for each other.
    :attr:`group` holds each environment's current group as one integer id."""

    def __init__(self, game, seats: list[list | None], weights: list[np.ndarray | None],
                 num_envs: int, rng: np.random.Generator, env_seed: int, group_size: int,
                 self_play: float = 0.0,
                 joint: tuple[np.ndarray, np.ndarray] | None = None):
        if group_size < 1 or num_envs % group_size:
            raise ValueError(f"group_size ({group_size}) must divide num_envs ({num_envs})")
        super().__init__(game, seats, weights, num_envs, rng, env_seed, self_play, joint)
        self.group_size = group_size
        self.slots = num_envs // group_size
        self.round = np.zeros(num_envs, dtype=np.int64)  # episodes each environment has begun
        self.group = np.zeros(num_envs, dtype=np.int64)
        self._open: dict[int, list] = {}  # group id -> [chance seed, draw row, starts left]
        self.restart(np.arange(num_envs), np.zeros(num_envs, dtype=np.int64))

    def restart(self, envs: np.ndarray, players: np.ndarray) -> None:
        """Start each environment's next episode, in its next group."""
        if not envs.size:
            return
        seeds = np.empty(len(envs), dtype=np.int64)
        for n, i in enumerate(envs.tolist()):
            gid = int(self.round[i]) * self.slots + i // self.group_size
            entry = self._open.get(gid)
            if entry is None:
                entry = self._open[gid] = [int(self.rng.integers(0, 2**62)), self.drawn(1)[0],
                                           self.group_size]
            seeds[n] = entry[0]
            for q, members in enumerate(self.seats):
                if members is not None:
                    self.choice[i, q] = entry[1][q]
            entry[2] -= 1
            if not entry[2]:
                del self._open[gid]
            self.group[i] = gid
            self.round[i] += 1
        self.vg.reset(envs, seeds)
        players[envs] = [self.vg.states[i].current_player() for i in envs]
