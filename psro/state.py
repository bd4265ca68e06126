"""The data of a run, with no I/O: what the loop changes each iteration, what a checkpoint
saves and what a resume reads back."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from psro.payoffs import PayoffTable


@dataclass
class RunState:
    """A run's populations, payoff table, meta-strategies, metrics and clocks.

    ``populations[p]`` is player p's list of members (see :mod:`psro.extensive_form.members`), in
    the order they joined; ``table`` holds the payoffs of every profile of members; ``mixtures[p]``
    is player p's current meta-strategy over ``populations[p]``; ``mixture_history`` and
    ``metrics`` have one row per iteration; ``oracle_log`` holds the oracle's diagnostics rows
    (PPO: one per update). ``evaluation`` names how payoffs and exploitability are computed
    (``"exact"`` or ``"sampled"``), recorded so readers need not guess. Data of one variant
    lives with its algorithm, which saves it in the ``mixture_history`` rows (JPSRO's joint
    distribution: :func:`joint_record`).
    """

    populations: list[list]
    table: PayoffTable
    evaluation: str
    mixtures: list[np.ndarray] = field(default_factory=list)
    mixture_history: list[dict] = field(default_factory=list)
    metrics: list[dict] = field(default_factory=list)
    oracle_log: list[dict] = field(default_factory=list)
    iteration: int = -1
    wall_time_s: float = 0.0
    env_steps: int = 0
    stop_reason: str | None = None

    @classmethod
    def empty(cls, num_players: int, evaluation: str) -> RunState:
        """A run before iteration 0: empty populations and table."""
        return cls([[] for _ in range(num_players)],
                   PayoffTable(num_players, exact=evaluation == "exact"), evaluation)

    @property
    def num_players(self) -> int:
        """Players of the game."""
        return len(self.populations)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Population size of each player."""
        return tuple(len(pop) for pop in self.populations)


def joint_record(joint: np.ndarray) -> dict:
    """A joint distribution as JSON-ready data: ``shape``, the ``profiles`` of positive
    probability (lists of member indices) and their ``probs``."""
    index = np.argwhere(joint > 0)
    return {"shape": list(joint.shape), "profiles": index.tolist(),
            "probs": joint[tuple(index.T)].tolist()}


def joint_from_record(record: dict) -> np.ndarray:
    """The array that :func:`joint_record` wrote. ``ValueError`` for a malformed record."""
    shape = tuple(int(n) for n in record["shape"])
    profiles = np.asarray(record["profiles"], dtype=np.int64).reshape(-1, len(shape))
    probs = np.asarray(record["probs"], float)
    if len(probs) != len(profiles) or np.any(probs < 0) or not np.all(np.isfinite(probs)) \
            or np.any(profiles < 0) or np.any(profiles >= np.array(shape)):
        raise ValueError("a joint record holds profiles outside its shape or bad "
                         "probabilities")
    joint = np.zeros(shape)
    joint[tuple(profiles.T)] = probs
    return joint
