"""Build a run's parts from its config: the game context, the oracle (by name from the oracle
registry), the evaluator, the meta-solver, the algorithm (the PSRO variant) and the backend.
Everything that can be refused is refused here, before any work or any file is written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import solvers
from psro import algorithms, oracles
from psro.backends import Backend, make_backend
from psro.config import RunConfig
from psro.context import GameContext
from psro.errors import ConfigError
from psro.evaluation import Evaluator, make_evaluator
from psro.ppo_config import PPOConfig
from psro.tensorboard import require_tensorboard


@dataclass
class Parts:
    """What the loop calls. ``config`` is the run's config with every PPO option written out
    (so a resumed run keeps its options even if a later version changes a default)."""

    config: RunConfig
    context: GameContext
    oracle: oracles.Oracle
    evaluator: Evaluator
    meta_solver: Callable[[list[np.ndarray]], list[np.ndarray]]
    backend: Backend
    algorithm: object = None
    """The variant (:mod:`psro.algorithms`): the meta-strategy and the best responses to train."""

    def manifest(self) -> dict:
        """What a run directory records about how the run is played and evaluated."""
        tree = self.context.tree
        return {"evaluation": self.evaluator.name,
                "turn_based": self.context.play_game is not self.context.game.pyspiel_game,
                "infoset_digest": None if tree is None else tree.keys_digest(),
                "infoset_keys": None if tree is None else [p.keys for p in tree.players]}


def build_parts(config: RunConfig) -> Parts:
    """The parts of a run of ``config`` (validated). Raises ``ConfigError``, ``GameError`` or
    ``GameTooLargeError`` for what cannot run."""
    config = config.validate()
    if config.tensorboard:
        require_tensorboard()
    config = config.merged({"ppo": PPOConfig.from_dict(config.ppo).to_dict()})
    entry = oracles.get(config.oracle)
    backend = make_backend(config.backend, config.workers, config.ray_address)
    context = GameContext.build(config, entry.turn_based)
    evaluator = make_evaluator(context)
    oracle = entry.factory(context)
    meta_solver = solvers.get(config.meta_solver, **config.meta_solver_options)
    n = context.num_players
    try:  # fail before any work if the meta-solver cannot handle this kind of game
        meta_solver([np.zeros((1,) * n) for _ in range(n)])
    except (solvers.PayoffError, solvers.SolverError) as err:
        raise ConfigError(f"meta-solver {config.meta_solver!r} cannot solve this game: "
                          f"{err}") from None
    algorithm = algorithms.build(context, meta_solver)
    if not oracles.targeted(oracle) and algorithm.name == "rectified":
        raise ConfigError(f"algorithm 'rectified' trains several best responses per player; "
                          f"oracle {config.oracle!r} has no targeted_tasks")
    return Parts(config, context, oracle, evaluator, meta_solver, backend, algorithm)
