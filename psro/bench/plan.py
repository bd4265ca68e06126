"""A suite's plan: its runs in the order they start (:class:`PlannedRun`, :func:`plan`), what
each run's directory holds (:func:`held_by`) and running one of them to its end
(:func:`run_one`), in whichever process runs it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from psro.bench.folder import slug
from psro.bench.preflight import refusal
from psro.bench.suites import Method, Suite, SuiteGame, run_config
from psro.build import settings_read
from psro.config import RunConfig
from psro.errors import ConfigError, MetaSolverError, RunDirectoryError
from psro.reports.groups import flatten
from psro.storage import checkpoint
from psro.storage.files import atomic_write_text
from psro.storage.text_files import read_json


@dataclass
class PlannedRun:
    """One run of a suite: its game, method, seed, run directory and configuration."""

    game: SuiteGame
    method: Method
    seed: int
    path: Path
    config: RunConfig

    @property
    def name(self) -> str:
        """``game · method · seed N``, for progress lines."""
        return f"{self.game.label} · {self.method.label} · seed {self.seed}"

    @property
    def outcome_path(self) -> Path:
        """``seed-N.done.json`` beside the run directory: how the run ended."""
        return self.path.with_name(f"{self.path.name}.done.json")

    @property
    def finished(self) -> bool:
        """Whether the suite recorded the run's end; a run without it was killed, is running
        now or has not started, and running the suite again resumes or starts it."""
        return self.outcome_path.exists()


def deterministic(config: RunConfig, tier: str) -> bool:
    """Whether no part of a run of ``config`` reads its seed (every seed gives one run)."""
    return "seed" not in settings_read(config, "exact" if tier == "walkable" else "sampled")


def plan(suite: Suite, out: Path, overrides: dict | None = None) -> list[PlannedRun]:
    """The suite's runs in the order they run (seed by seed, then game and method), each
    config validated with ``overrides`` merged in (:class:`ConfigError` otherwise)."""
    runs = []
    for k, seed in enumerate(suite.seeds):
        for game in suite.games:
            for method in game.methods:
                config = run_config(game, method, seed).merged(overrides or {}).validate()
                if k > 0 and deterministic(config, game.tier):
                    continue
                path = out / slug(game.label) / slug(method.label) / f"seed-{seed}"
                runs.append(PlannedRun(game, method, seed, path, config))
    return runs


UNCOMPARED = ("backend", "workers", "ray_address", "lower_bound.final")
"""Settings in which a suite's run may differ from the run its directory holds: where it runs,
and whether the run measured its own final bound (the suite reads only the shared one it
measures itself; runs of suites started before ``lower_bound.final`` existed did)."""


def held_by(run: PlannedRun) -> tuple[dict | bool | None, dict | None]:
    """What the directory holds: the outcome the suite recorded when the run ended
    (``{"iteration", "stop_reason", "error"}``) where the directory still ends at that
    iteration, False for a run there that did not end (killed: it is resumed), None for no run
    there; and the run's last metrics row (None where it has none).
    :class:`RunDirectoryError` for a run of another configuration."""
    if not (run.path / "config.json").exists():
        return None, None
    saved = checkpoint.load(run.path, networks=False)
    theirs = flatten(saved.config.to_dict())
    differ = sorted(k for k, v in flatten(run.config.to_dict()).items()
                    if k not in UNCOMPARED and v != "null" and theirs.get(k) != v)
    if differ:
        raise RunDirectoryError(f"{run.path} holds a run of another configuration "
                                f"({', '.join(differ)} differ from the suite's); choose "
                                f"another --out")
    rows = saved.state.metrics
    last = rows[-1] if rows else None
    try:
        outcome = read_json(run.outcome_path)
    except ValueError:  # missing or damaged: the run is continued (it stops at once if done)
        return False, last
    ended = isinstance(outcome, dict) and last is not None and \
        last["iteration"] == outcome.get("iteration")
    return (outcome if ended else False), last


def run_one(run: PlannedRun, held: tuple[dict | bool | None, dict | None],
            callbacks: tuple = ()) -> tuple[dict, str | None, bool]:
    """Run (or resume, or leave as it is when it ended) one planned run, given what its
    directory holds (:func:`held_by`): its last row, and why it stopped short of its budget
    (a meta-solver that failed: the run keeps the iterations before it, the suite goes on, and
    the report shows where it stopped). The outcome is recorded beside the run
    (``seed-N.done.json``), so a later call skips it; the third value says whether anything
    ran."""
    from psro.loop import PSRO

    done, last = held
    if done:
        return last, done.get("error"), False
    if done is None:
        try:
            psro_run = PSRO(config=run.config, out=run.path, callbacks=callbacks)
        except ConfigError as err:
            raise ConfigError(refusal(run, err)) from None
    else:
        psro_run = PSRO.resume(run.path, callbacks)
        psro_run.use_backend(run.config.backend, run.config.workers, run.config.ray_address)
    try:
        last, error, reason = psro_run.run()[-1], None, psro_run.stop_reason
    except MetaSolverError as err:
        last = psro_run.metrics[-1]  # the last saved iteration, before the failed meta-solve
        error, reason = str(err), "meta_solver_failed"
    atomic_write_text(run.outcome_path, json.dumps(
        {"iteration": last["iteration"], "stop_reason": reason, "error": error}, indent=1))
    return last, error, True


def bound_path(run: PlannedRun) -> Path:
    """``seed-N.bound.json`` beside the run directory: the large tier's shared measurement."""
    return run.path.with_name(f"{run.path.name}.bound.json")
