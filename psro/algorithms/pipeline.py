"""Pipeline PSRO (P2SRO, McAleer et al. 2020): K learners per player train at once.

Each player has ``pipeline_width`` (K) *active learners*, ordered by level. Every iteration
each active learner trains one *chunk* of ``ceil(ppo.env_steps / K)`` environment steps,
continuing from its own network:

- the lowest learner against the meta-Nash (the run's meta-solver) of the *frozen* population;
- the learner at level j against the meta-Nash of the frozen population plus the current
  policies of the active learners below level j (of every player).

After its chunk the lowest learner is frozen into the population when it has plateaued (the
chunk was stopped early by PPO's plateau rule, ``ppo.plateau_patience``) or has spent its
budget: K chunks, the ``ppo.env_steps`` that a ``psro`` best response gets. A new learner then
starts at the top, warm-started from the learner below it. So an iteration costs what a
``psro`` iteration does (K chunks of 1/K of the budget per player) and freezes one member per
player, as ``psro`` adds one; what differs is that each learner spends its first chunks
training against where the population is going (the learners below it) instead of waiting.
The K learners of a player are K independent tasks per iteration, so they run at once on the
``processes`` and ``ray`` backends (on ``local`` they take turns).

Every chunk's result joins the population as a member (a *snapshot* of its learner, metadata
``learner`` = its id and, once frozen, ``frozen`` = True), so run directories, resume and
reports need no new format: a resumed run rebuilds the levels from the members' metadata and
continues every learner from its newest snapshot's network. Earlier snapshots of a learner are
*retired*: they stay in the payoff table with weight 0 and take no part in any meta-solve.
The meta-strategy that exploitability measures is the meta-Nash over the frozen members and
the learners' current snapshots.

Needs the PPO oracle (exact best responses neither train in chunks nor plateau) with
``warm_start`` (the default).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import solvers
from psro import oracles
from psro.algorithms.base import Algorithm, AlgorithmEntry, solver_input
from psro.context import GameContext
from psro.errors import ConfigError, MetaSolverError
from psro.extensive_form.members import Keys
from psro.oracles.spec import SCRATCH, Target
from psro.rl.config import PPOConfig
from psro.state import RunState


def learner_of(member) -> int | None:
    """The learner id of a snapshot (None for the initial member)."""
    return member.metadata.get(Keys.LEARNER)


class PipelineAlgorithm(Algorithm):
    """Pipeline PSRO (see the module docstring)."""

    name = "pipeline"

    def __init__(self, meta_solver: Callable, solver_name: str, width: int, env_steps: int):
        self.meta_solver, self.solver_name = meta_solver, solver_name
        self.width = width
        self.chunk_steps = -(-env_steps // width)
        """A learner's chunk: ``ceil(env_steps / width)``, so ``width`` chunks make the
        budget of one ``psro`` best response."""

    # -- the population's structure, read from the members' metadata -------------------------
    @staticmethod
    def frozen(population: list) -> list[int]:
        """Indices of the frozen members (the initial one included)."""
        return [k for k, m in enumerate(population)
                if learner_of(m) is None or m.metadata.get(Keys.FROZEN)]

    @staticmethod
    def active(population: list) -> list[tuple[int, int]]:
        """``(learner id, index of its newest snapshot)`` of each active learner, lowest
        level first."""
        newest: dict[int, int] = {}
        for k, m in enumerate(population):
            if learner_of(m) is not None:
                newest[learner_of(m)] = k
        return sorted((lid, k) for lid, k in newest.items()
                      if not population[k].metadata.get(Keys.FROZEN))

    def _nash(self, state: RunState, sets: list[list[int]]) -> list[np.ndarray]:
        """The meta-solver's mixtures on the sub-table of ``sets`` (one index list per
        player), as weights over each full population (0 outside the set)."""
        sub = [np.asarray(v)[np.ix_(*sets)] for v in state.table.as_game()]
        try:
            mixtures = solvers.as_mixtures(self.meta_solver(solver_input(self.solver_name, sub)),
                                           sub[0].shape)
        except (solvers.SolverError, solvers.PayoffError) as err:
            raise MetaSolverError(f"meta-solver {self.solver_name!r} failed at iteration "
                                  f"{state.iteration}: {err} (the previous iteration's "
                                  f"checkpoint is kept)") from None
        out = []
        for p, (members, mix) in enumerate(zip(sets, mixtures, strict=True)):
            weights = np.zeros(len(state.populations[p]))
            weights[members] = mix
            out.append(weights)
        return out

    def meta(self, state: RunState) -> list[np.ndarray]:
        """The meta-Nash over the frozen members and the learners' current snapshots."""
        sets = [sorted(self.frozen(pop) + [k for _, k in self.active(pop)])
                for pop in state.populations]
        return self._nash(state, sets)

    def targets(self, state: RunState) -> list[Target]:
        """One chunk per active learner (new learners fill the pipeline up to its width,
        each warm-started from the learner below it; the first ones from scratch)."""
        levels = []  # per player: (learner id, current snapshot or None, start or None)
        for pop in state.populations:
            active = [(lid, k, k) for lid, k in self.active(pop)]
            top = max([learner_of(m) or 0 for m in pop], default=0)
            newest = max((k for k, m in enumerate(pop) if learner_of(m) is not None),
                         default=None)  # below an empty pipeline: the last frozen learner
            while len(active) < self.width:
                top += 1
                below = (active[-1][1] if active[-1][1] is not None else active[-1][2]) \
                    if active else newest
                active.append((top, None, below))
            levels.append(active)
        out = []
        for p, active in enumerate(levels):
            for level, (lid, _, start) in enumerate(active):
                sets = [sorted(self.frozen(pop) + [k for _, k, _ in levels[q][:level]
                                                   if k is not None])
                        for q, pop in enumerate(state.populations)]
                out.append(Target(p, tuple(self._nash(state, sets)), tag=lid,
                                  start=SCRATCH if start is None
                                  else state.populations[p][start], budget=self.chunk_steps))
        return out

    def admit(self, state: RunState, members: list) -> list:
        """Every snapshot joins; a player's lowest learner is frozen when its chunk plateaued
        (stopped before its chunk's steps) or it has trained ``width`` chunks."""
        for p, pop in enumerate(state.populations):
            mine = [m for m in members if m.player == p]
            for member in mine:
                member.metadata[Keys.LEARNER] = member.metadata.get(Keys.TARGET)
            active = self.active(pop)
            lowest = active[0][0] if active else min(
                (learner_of(m) for m in mine), default=None)
            for member in mine:
                if learner_of(member) != lowest:
                    continue
                chunks = 1 + sum(1 for m in pop if learner_of(m) == lowest)
                plateaued = (member.metadata.get("env_steps") or 0) < self.chunk_steps
                if plateaued or chunks >= self.width:
                    member.metadata[Keys.FROZEN] = True
        return members


def _pipeline(context: GameContext, meta_solver: Callable) -> PipelineAlgorithm:
    """The registry's factory: learners continue from their own networks, so an oracle that
    reads the PPO options must warm-start."""
    config = context.config
    ppo = PPOConfig.from_dict(config.ppo)
    if "ppo" in oracles.get(config.oracle).settings and not ppo.warm_start:
        raise ConfigError("algorithm 'pipeline' continues each learner from its network: "
                          "ppo.warm_start must be true")
    return PipelineAlgorithm(meta_solver, config.meta_solver, config.pipeline_width,
                             ppo.env_steps)


ENTRY = AlgorithmEntry(_pipeline, settings=("pipeline_width",),
                       needs=lambda config, walked: frozenset({"trains", "targets"}),
                       because=lambda config, walked: " (it trains learners in chunks until "
                                                      "they plateau)")


__all__ = ["PipelineAlgorithm", "learner_of"]
