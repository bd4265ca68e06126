"""The PSRO loop: best responses, payoff-table extension, meta-solve, exploitability.

Iteration 0 is the initial population (one uniform-random policy per player). Each iteration
then (1) asks the oracle for new best responses against the other players' meta-policy,
(2) adds them to the populations, (3) has the evaluator fill only the new payoff-table
entries, (4) solves the meta-game, and (5) has the evaluator measure the meta-policy. The
parts (oracle, evaluator, meta-solver, backend) are built from the :class:`RunConfig` by
:func:`psro.build.build_parts`; the loop only hands data from one to the next.

Each seat has its own population: a best response trained for seat p is only ever played in
seat p. (OpenSpiel's psro_v2 shares one population between the seats of a symmetric game and
so plays seat-0 policies in seat 1, where they are uniformly random; on turn-based
rock-paper-scissors it ends at NashConv 0.59. Here the same game converges to 0.)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from games import Game
from psro import oracles
from psro.backends.threads import one_blas_thread
from psro.build import Parts, build_parts, check_limits
from psro.config import RunConfig, run_limits
from psro.errors import ConfigError, RunDirectoryError
from psro.extensive_form.policies import MetaPolicy
from psro.metrics_row import TIMING_FIELDS
from psro.option_checks import checked_callbacks
from psro.payoffs import population_diversity, response_gains, utility_scale
from psro.run_changes import RunChanges
from psro.state import RunState
from psro.storage import checkpoint
from psro.storage.files import as_path
from psro.storage.provenance import differences, provenance

Callback = Callable[["PSRO", dict], None]


class PSRO(RunChanges):
    """A PSRO run.

    ``PSRO(game, oracle, meta_solver, **settings)`` or ``PSRO(config=RunConfig(...),
    **settings)``: every argument is a :class:`RunConfig` field, merged into ``config`` (or the
    defaults) by :meth:`RunConfig.merged`, the same way ``--config`` files and command-line
    flags are. ``game`` may also be a loaded :class:`games.Game`.

    ``out``: run directory, missing or empty (``overwrite=True``: or holding an earlier run,
    which is replaced); when given, every iteration is saved there (see
    :mod:`psro.storage.checkpoint`) and :meth:`resume` continues from it. ``callbacks``: functions
    ``f(psro, row)`` called after every iteration with its metrics row.

    Raises :class:`~psro.errors.ConfigError` for bad settings, including a meta-solver that
    cannot solve this game (``nash`` on a three-player game), ``games.GameError`` for a bad
    game, and :class:`~psro.errors.GameTooLargeError` for an exact oracle on a game too large
    to walk.
    """

    def __init__(self, game: str | Game | None = None, oracle: str | None = None,
                 meta_solver: str | None = None, *, config: RunConfig | None = None,
                 out: str | Path | None = None, callbacks: tuple[Callback, ...] = (),
                 overwrite: bool = False, **settings):
        if isinstance(game, Game):
            game = game.spec
        if out is not None:
            as_path(out, "the run directory")  # before any work
        if config is not None and not isinstance(config, RunConfig):
            raise ConfigError(f"config must be a RunConfig; got {type(config).__name__}")
        config = (config or RunConfig()).merged(
            {"game": game, "oracle": oracle, "meta_solver": meta_solver, **settings}).validate()
        parts = build_parts(config)
        self._start(parts.config, parts, RunState.empty(parts.context.num_players,
                                                        parts.evaluator.name), callbacks)
        if out is not None:
            self.writer = checkpoint.RunWriter.create(
                out, self.config, {**parts.manifest(), "provenance": provenance()},
                overwrite=overwrite)
            self._attach_folder(out)

    def _start(self, config: RunConfig, parts: Parts, state: RunState,
               callbacks: tuple[Callback, ...]) -> None:
        start_backend = getattr(parts.backend, "start", None)
        if start_backend is not None:  # a cluster that cannot be reached: before any work
            start_backend(parts.warm_modules)
        self.config = config
        self.parts = parts
        self.oracle, self.evaluator = parts.oracle, parts.evaluator
        self.backend = parts.backend
        self.state = state
        self.callbacks = checked_callbacks(callbacks)
        self.writer: checkpoint.RunWriter | None = None
        self._write_s = 0.0
        self.limits = run_limits(config)
        """``(iterations, time budget, target)``: what ends the run (:meth:`run` sets them)."""
        self.provenance_changes: list[str] = []
        """On a resumed run: what differs from the versions that made it (in words)."""
        self.deterministic = parts.deterministic
        """No part reads the seed: every seed gives the same numbers."""
        self.notice: Callable[[str], None] | None = None  # told of the final lower bound
        self.columns = parts.metric_columns()  # of every row, in order (psro.metrics_row)

    def _attach_folder(self, out: str | Path) -> None:
        """What the run keeps in its directory besides the writer's files: TensorBoard's
        logs, and the progress of an evaluator that can resume a long measurement there."""
        if (keep_progress := getattr(self.evaluator, "keep_progress_in", None)) is not None:
            keep_progress(Path(out))
        if self.config.tensorboard:
            from psro.storage.tensorboard import tensorboard_callback

            self.callbacks.append(tensorboard_callback(Path(out) / "tensorboard"))

    @classmethod
    def resume(cls, out: str | Path, callbacks: tuple[Callback, ...] = ()) -> PSRO:
        """Continue the run in ``out`` from its last saved iteration. Corrupt or incompatible
        files raise :class:`RunDirectoryError` and are left untouched."""
        saved = checkpoint.load(out, resume=True)
        parts = build_parts(saved.config, resumed=True)
        if parts.manifest()["infoset_digest"] != saved.manifest.get("infoset_digest") or \
                parts.evaluator.name != saved.state.evaluation:
            raise RunDirectoryError(
                f"{out}: the saved policies do not match the information sets of "
                f"{saved.config.game!r} in this OpenSpiel version")
        run = cls.__new__(cls)
        parts.algorithm.restore(saved.state)
        run._start(saved.config, parts, saved.state, callbacks)
        run.provenance_changes = differences(saved.manifest.get("provenance"), provenance())
        run.columns = saved.continued_columns(run.columns)
        run.writer = saved.writer(run.columns)
        run._attach_folder(out)
        return run

    # -- state, for readers -------------------------------------------------------------------
    iteration = property(lambda self: self.state.iteration)
    metrics = property(lambda self: self.state.metrics)
    mixtures = property(lambda self: self.state.mixtures)
    population = property(lambda self: self.state.populations)
    table = property(lambda self: self.state.table)
    oracle_log = property(lambda self: self.state.oracle_log)
    stop_reason = property(lambda self: self.state.stop_reason)
    tree = property(lambda self: self.parts.context.tree)

    # -- the iteration ----------------------------------------------------------------------
    def initialize(self) -> dict:
        """Iteration 0: one uniform-random member per player, its payoffs and meta-solve."""
        if self.state.iteration >= 0:
            raise RuntimeError("this run is already initialised")
        start = time.perf_counter()
        for member in self.evaluator.initial_members():
            self.state.populations[member.player].append(member)
        self.state.iteration = 0
        return self._evaluate_and_solve(start, {"oracle_s": 0.0})

    def step(self) -> dict:
        """One PSRO iteration; returns its metrics row."""
        if self.state.iteration < 0:
            return self.initialize()
        start = time.perf_counter()
        state = self.state
        state.iteration += 1
        targets = self.parts.algorithm.targets(state)
        tasks = oracles.target_tasks(self.oracle, state.iteration, state.populations, targets)
        results = self.backend.run(tasks)
        responses = oracles.target_responses(self.oracle, state.iteration, targets, results)
        for response in responses:
            state.env_steps += response.env_steps
            state.oracle_log += response.log
        joined: list[list[int]] = [[] for _ in state.populations]
        for member in self.parts.algorithm.admit(state, [r.member for r in responses]):
            joined[member.player].append(len(state.populations[member.player]))
            state.populations[member.player].append(member)
        return self._evaluate_and_solve(start, {"oracle_s": time.perf_counter() - start},
                                        joined)

    def _evaluate_and_solve(self, start: float, timings: dict,
                            joined: list[list[int]] | None = None) -> dict:
        state = self.state
        t = time.perf_counter()
        for member in self.parts.algorithm.expand(state):
            state.populations[member.player].append(member)
        entries = self.evaluator.extend(state.table, state.populations, self.backend)
        timings["evaluation_s"] = time.perf_counter() - t
        responses = {}
        if joined is not None and state.table.exact and state.mixtures:
            responses = {f"response_gain_p{p}": gain for p, gain in
                         enumerate(response_gains(state.table, state.mixtures, joined))}
        self._meta_solve(timings)
        t = time.perf_counter()
        measured = self.evaluator.measure(state.populations, state.mixtures, state.table)
        during = getattr(self.evaluator, "during", None)
        measured.update((during(state, self.backend) if during else None) or {})
        measured.update(self.parts.algorithm.metrics(state))
        measured.update(population_diversity(
            state.table, utility_scale(self.parts.context.game.pyspiel_game)))
        timings["exploitability_s"] = time.perf_counter() - t
        timings["write_s"] = self._write_s
        row = dict.fromkeys(self.columns)
        row.update({"iteration": state.iteration,
                    "wall_time_s": state.wall_time_s + time.perf_counter() - start,
                    "population_size": len(state.populations[0]), **measured, **responses,
                    "entries_evaluated": entries, "env_steps": state.env_steps, **timings})
        state.metrics.append(row)
        history = {"iteration": state.iteration, "mixtures": [m.tolist() for m in state.mixtures],
                   **self.parts.algorithm.record(state)}
        state.mixture_history.append(history)
        self._save(start)
        for callback in self.callbacks:
            callback(self, row)
        return row

    def _meta_solve(self, timings: dict) -> None:
        """The meta-strategy; where the evaluator refines the entries it depends on
        (``refine``), it does so and the meta-game is solved again, until it refines no
        more. Refining counts as evaluation time."""
        state, refine = self.state, getattr(self.evaluator, "refine", None)
        timings["meta_solver_s"] = 0.0
        while True:
            t = time.perf_counter()
            state.mixtures = self.parts.algorithm.meta(state)
            timings["meta_solver_s"] += time.perf_counter() - t
            t = time.perf_counter()
            refined = refine is not None and refine(state, self.backend)
            timings["evaluation_s"] += time.perf_counter() - t
            if not refined:
                return

    def _save(self, start: float) -> None:
        """Write the iteration (when the run has a directory) and count the writing in the
        run's clock: ``wall_time_s`` is real time."""
        t = time.perf_counter()
        self.state.wall_time_s += t - start  # the record holds the time up to its writing
        if self.writer is not None:
            self.writer.save(self.state)
        self._write_s = time.perf_counter() - t
        self.state.wall_time_s += self._write_s

    def run(self, iterations: int | None = None, time_budget_s: float | None = None,
            target_exploitability: float | None = None,
            env_step_budget: int | None = None) -> list[dict]:
        """Iterate until ``iterations`` (total, counting earlier and resumed ones), the time
        budget (real time summed over resumes, writing included), the target exploitability
        or the env-step budget is reached, whichever comes first
        (:func:`psro.config.run_limits`: limits given here replace the config's; a budget or
        target without iterations runs until it). Measures
        what the evaluator measures only at the end (the sampled lower bound), then returns
        all metrics rows (a copy: later calls do not change it)."""
        self.limits = check_limits(self.parts, run_limits(
            self.config, iterations, time_budget_s, target_exploitability, env_step_budget))
        self.state.stop_reason = None  # until this call ends: a killed run's records say so
        self.parts.algorithm.aim(self.limits[2])
        try:
            with one_blas_thread():  # matrix-vector products: see psro.backends.threads
                self._iterate(*self.limits)
            if self.writer is not None:  # the last record says why the run ended
                self.writer.save(self.state)
        finally:
            self.backend.close()  # worker processes, if any (started again when needed)
            if self.writer is not None:
                self.writer.release()
        return [dict(row) for row in self.state.metrics]

    def _iterate(self, iterations: int | None, budget: float | None,
                 target: float | None, steps: int | None) -> None:
        if self.state.iteration < 0:
            self.initialize()
        while True:
            last = self.state.metrics[-1]
            if target is not None and last["exploitability"] is not None \
                    and last["exploitability"] <= target:
                self.state.stop_reason = "target_exploitability"
                break
            if budget is not None and self.state.wall_time_s >= budget:
                self.state.stop_reason = "time_budget"
                break
            if steps is not None and self.state.env_steps >= steps:
                self.state.stop_reason = "env_step_budget"
                break
            if iterations is not None and self.state.iteration >= iterations:
                self.state.stop_reason = "iterations"
                break
            reason = self.parts.algorithm.stop(self.state)
            if reason is not None:
                self.state.stop_reason = reason
                break
            self.step()
        if self.state.metrics[-1]["exploitability"] is None:
            self._finish()

    def _finish(self) -> None:
        """The evaluator's final measurement (lower bound or kernel) into the last row, timed."""
        start = time.perf_counter()
        if (text := getattr(self.evaluator, "finish_text", lambda: None)()) and self.notice:
            self.notice(text)
        measured = self.evaluator.finish(self.state, self.backend)
        if measured:
            row = self.state.metrics[-1]
            row.update(measured)
            row["exploitability_s"] += time.perf_counter() - start
            row["wall_time_s"] = self.state.wall_time_s + time.perf_counter() - start
            self._save(start)

    def meta_policy(self):
        """The current meta-policy as an OpenSpiel ``Policy``: the reach-weighted mixture on the
        walked tree (:class:`MetaPolicy`), or, where payoffs are sampled, the networks' mixture
        (:class:`~psro.evaluation.sampled_policy.SampledMetaPolicy`)."""
        context = self.parts.context
        if context.tree is None:
            from psro.evaluation.sampled_policy import SampledMetaPolicy

            return SampledMetaPolicy(context.play_game, self.state.populations,
                                     self.state.mixtures)
        return MetaPolicy(context.tree, self.state.populations, self.state.mixtures)


__all__ = ["PSRO", "TIMING_FIELDS"]
