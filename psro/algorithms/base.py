"""What every PSRO variant is: :class:`Algorithm` (the defaults), :class:`PSROAlgorithm`
(the meta-solver's mixtures, one best response per player against them; the base of several
variants) and :class:`AlgorithmEntry`, what a variant declares in the registry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

import solvers
from psro.errors import MetaSolverError
from psro.oracles.spec import Target, plain_targets
from psro.state import RunState

SUPPORT_TOL = 1e-9
"""Weights above this are in a mixture's support."""


class Algorithm:
    """Base of the variants: by default an algorithm adds no members of its own, admits every
    best response, has no metrics and no stop reason of its own."""

    def expand(self, state: RunState) -> list:
        """Members the algorithm itself adds before evaluation (none)."""
        return []

    def admit(self, state: RunState, members: list) -> list:
        """Which of the oracle's new members join the populations (all)."""
        return members

    def metrics(self, state: RunState) -> dict:
        """Metrics of the algorithm's own for the iteration's row (none)."""
        return {}

    def columns(self, num_players: int) -> tuple[str, ...]:
        """Every key :meth:`metrics` may write (declared before the first row; none)."""
        return ()

    def stop(self, state: RunState) -> str | None:
        """A stop reason of the algorithm's own (none)."""
        return None

    def record(self, state: RunState) -> dict:
        """Data of the algorithm's own saved with the iteration's mixtures (none)."""
        return {}

    def restore(self, state: RunState) -> None:
        """Read back what :meth:`record` saved, on a resumed run (nothing)."""

    def aim(self, target_exploitability: float | None) -> None:
        """The run's target exploitability (None: none), told before each ``run()`` call
        iterates, for an algorithm whose own stopping point depends on it (ignored)."""


def solver_input(solver_name: str, payoffs: list[np.ndarray]) -> list[np.ndarray]:
    """What a meta-solver is given: the payoff table, or zeros of its shape for a solver that
    reads no values (``solvers.reads_payoffs``), whose entries may not have been estimated."""
    if solvers.reads_payoffs(solver_name):
        return payoffs
    return [np.zeros(np.shape(v)) for v in payoffs]


class PSROAlgorithm(Algorithm):
    """Vanilla PSRO: the meta-solver's mixture; one best response per player against it."""

    name = "psro"

    def __init__(self, meta_solver: Callable, solver_name: str):
        self.meta_solver, self.solver_name = meta_solver, solver_name

    def meta(self, state: RunState) -> list[np.ndarray]:
        """The meta-solver's mixtures on the payoff table."""
        try:
            mixtures = self.meta_solver(solver_input(self.solver_name, state.table.as_game()))
            return solvers.as_mixtures(mixtures, state.table.shape)
        except (solvers.SolverError, solvers.PayoffError) as err:
            raise MetaSolverError(f"meta-solver {self.solver_name!r} failed at iteration "
                                  f"{state.iteration}: {err} (the previous iteration's "
                                  f"checkpoint is kept)") from None

    def targets(self, state: RunState) -> list[Target]:
        """One target per player: the meta-strategy."""
        return plain_targets(state.mixtures)


@dataclass(frozen=True)
class AlgorithmEntry:
    """A registered algorithm: ``factory(context, meta_solver) -> algorithm``, and what it
    reads of the run's settings, so that a setting it ignores is refused rather than silently
    dropped (:func:`psro.build.build_parts`).

    ``meta_solver``: the kind of meta-solver it calls, ``"mixtures"`` (``solvers.get``: one
    mixture per player), ``"joint"`` (``solvers.get_joint``) or None (it reads no meta-solver,
    and ``meta_solver``/``meta_solver_options`` are refused); ``default_meta_solver`` the one
    used when none is given. ``settings``: the RunConfig fields of its own it reads
    (``pipeline_width``, ``anytime_rounds``), and ``more(config, evaluation)`` those it reads
    only in some runs; ``why``: what it does instead of reading a meta-solver, for the
    refusal. What it needs of the game and the oracle is declared too (below), and
    :func:`psro.build.build_parts` derives every refusal from it."""

    factory: Callable
    meta_solver: str | None = "mixtures"
    default_meta_solver: str | None = "nash"
    settings: tuple[str, ...] = ()
    why: str = ""
    more: Callable = lambda config, evaluation: ()
    needs: Callable = lambda config, walked: frozenset()
    """``needs(config, walked) -> capabilities``: what the oracle must be able to do
    (:data:`psro.oracles.CAPABILITIES`), given the config and whether the game's tree is
    walked; a run whose oracle lacks one is refused, naming it."""
    needs_tree: Callable = lambda config: False
    """``needs_tree(config) -> purpose``: why the algorithm needs the walked tree (a false
    value where it does not); a game too large to walk is then refused, naming it."""
    because: Callable = lambda config, walked: ""
    """``because(config, walked) -> text``: why it needs what ``needs`` gives, for the
    refusal (e.g. ``" to train its learners in chunks"``)."""
    players: int | None = None
    """The number of players it handles (None: any)."""
    zero_sum: bool = False
    """Whether it needs a zero-sum game."""
    hint: Callable = lambda run: None
    """``hint(run) -> text | None``: a one-line suggestion printed when a run starts (plain
    ``psro`` points to the variant measured faster on the run's kind of game)."""
    reads_table: Callable = lambda config: config.meta_solver is None or \
        solvers.reads_payoffs(config.meta_solver)
    """``reads_table(config) -> bool``: whether it reads the payoff table's values (by
    default, whether its meta-solver does). Where nothing reads them and payoffs are sampled,
    the table's entries are not estimated (a self-play baseline pays nothing for them)."""
