"""What a run may change while it runs: the backend of its tasks, and its game.

:class:`RunChanges` is a base of :class:`psro.PSRO`; its methods work on the run's state and
parts through the loop's own steps (``_start``, ``_meta_solve``), as the loop does after a
resume.
"""

from __future__ import annotations

import time

import numpy as np

from games import Game
from psro.backends import make_backend
from psro.build import build_parts
from psro.errors import ConfigError
from psro.state import RunState


class RunChanges:
    """Changes to a run in progress (a base of :class:`psro.PSRO`)."""

    def change_game(self, game: str | Game) -> list[np.ndarray]:
        """Continue this run on another game with the same players, information states and
        actions, whose payoffs differ: the debate game before a retrained judge (the
        self-rewarding judge of the debate guide). The parts are built for ``game`` as for a
        new run of the same config; the populations, clocks, metrics rows and the
        algorithm's own state (what a resume restores) are kept; every payoff entry is
        evaluated again on the new game (its time counts in the run's clock) and the
        meta-game solved again. Returns the new meta-strategies.

        Raises :class:`ConfigError` for a game whose players, information-state tensor,
        actions or (walked games) information sets differ, and for a run that saves to a
        directory (its records name one game; change games in a run kept in memory)."""
        if self.writer is not None:
            raise ConfigError("a run saved to a directory cannot change its game: its records "
                              "name one game (run it without out= to change games)")
        if self.state.iteration < 0:
            raise RuntimeError("change_game needs an initialised run (call initialize first)")
        if isinstance(game, Game):
            game = game.spec
        config = self.config.merged({"game": game}).validate()
        parts = build_parts(config)
        problem = self.parts.context.difference(parts.context)
        if problem:
            raise ConfigError(f"cannot change the run's game from {self.config.game!r} to "
                              f"{game!r}: {problem}")
        self.backend.close()
        parts.algorithm.restore(self.state)
        notice = self.notice
        self._start(parts.config, parts, self.state, tuple(self.callbacks))
        self.notice = notice
        state = self.state
        start = time.perf_counter()
        state.table = RunState.empty(state.num_players, parts.evaluator.name).table
        self.evaluator.extend(state.table, state.populations, self.backend)
        self._meta_solve({"evaluation_s": 0.0})
        state.wall_time_s += time.perf_counter() - start
        return [np.array(m) for m in state.mixtures]

    def use_backend(self, backend: str, workers: int | None = None,
                    ray_address: str | None = None) -> None:
        """Run this process's following tasks on another backend (the numbers do not change;
        the run directory keeps its configured backend). ``ConfigError`` for an unknown name,
        a bad worker count or an address for a backend other than ``ray``."""
        new = make_backend(backend, workers, ray_address)
        self.backend.close()
        if hasattr(new, "start"):
            new.start(self.parts.warm_modules)  # an unreachable cluster fails now
        self.backend = new
