"""Running a suite (``psro bench SUITE --out DIR``): every (game, method, seed) an ordinary run
directory, references measured once per game and budget, and, on the large tier, every
method's approximate exploitability at one shared best-response budget and the head-to-head
results of the methods' final meta-policies.

The suite's folder (``<game>`` and ``<method>`` are the labels as folder names)::

    DIR/suite.json                         the suite as it was run
    DIR/<game>/reference.json              walkable tier: CFR+ curve, uniform policy
    DIR/<game>/<method>/seed-<s>/          a run directory (``psro run`` writes the same)
    DIR/<game>/<method>/seed-<s>.bound.json  large tier: the shared-budget lower bound
    DIR/<game>/<method>/seed-<s>.done.json   how the run ended: iteration, stop reason, error
    DIR/<game>/head_to_head.json           large tier: every pair of methods, same seeds

A run's meta-solver that fails stops that run (its ``done.json`` says where and why) and the
suite goes on. A large-tier game's head-to-head games of a seed are played as soon as every run
of the game and seed has ended and been measured, so a suite stopped part way keeps them.

Several runs at once: ``jobs`` (``psro bench --jobs N``) runs up to N of the suite's jobs at the
same time, in worker processes on this machine or as tasks of a Ray cluster
(:mod:`psro.bench.dispatch`); each run's numbers are those of the run made alone.

Order: seed by seed, and within a seed game by game and method by method, so that a slow spell
of the machine falls on every method alike; a game's reference lines are measured right after
its first seed's runs. A finished run is skipped, a killed one resumed, so the command can be
run again after an interruption and continues where it stopped; a call may run some of the
suite's games or methods only (``games``, ``methods``), into the same folder. A method whose
configuration reads no seed (exact oracle, deterministic meta-solver) runs its first seed
only: every seed would give the same run. A run directory that holds another configuration
than the suite's is refused, naming it, and so is a folder that holds another suite, or other
things and no ``suite.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TextIO

from psro.bench.dispatch import Dispatcher, SequentialJobs, make_dispatcher
from psro.bench.evaluation import head_to_head
from psro.bench.folder import check_suite_folder, slug
from psro.bench.jobs import Job, JobResult, suite_jobs
from psro.bench.plan import PlannedRun, bound_path, deterministic, held_by, plan
from psro.bench.preflight import check_runs
from psro.bench.progress import SuiteProgress
from psro.bench.suites import Suite, SuiteGame, check_suite, describe
from psro.errors import ConfigError
from psro.storage.files import atomic_write_text

SUITE_SETTINGS = ("backend", "workers", "ray_address")
"""The RunConfig fields a suite sets for every run."""


def run_suite(suite: Suite, out: str | Path, overrides: dict | None = None,
              stream: TextIO | None = None, quiet: bool = False,
              games: Sequence[str] | None = None, jobs: int | str | None = None,
              methods: Sequence[str] | None = None) -> list[PlannedRun]:
    """Run every run of ``suite`` into ``out`` (see the module docstring), then the reference
    lines (walkable tier) and the shared-budget lower bounds and head-to-head results (large
    tier). ``overrides``: RunConfig fields for every run (``backend``, ``workers``,
    ``ray_address``). ``games``: run only these games (labels, or their folder names), leaving
    the others' folders as they are; ``suite.json`` still describes the whole suite, so that
    calls for different games fill one folder and one report (a game's results do not depend
    on the others'). ``methods``: run only these methods (labels, or their folder names) of
    the chosen games; the head-to-head results take in every measured run of the game, of any
    method. ``jobs``: how many runs at once (None: one at a time in this process;
    ``"auto"``: as many as there is room for), :mod:`psro.bench.dispatch`. Returns the planned
    runs (of the games and methods run)."""
    out = Path(out)
    unknown = sorted(set(overrides or {}) - set(SUITE_SETTINGS))
    if unknown:
        raise ConfigError(f"{', '.join(unknown)} cannot be set for a whole suite; a suite sets "
                          f"backend, workers and ray_address")
    suite = check_suite(suite)
    chosen = select_games(suite, games)
    dispatcher = make_dispatcher(jobs, overrides or {})
    planned = [r for r in plan(suite, out, dispatcher.run_settings(overrides or {}))
               if r.game in chosen]
    runs = select_methods(planned, chosen, methods)
    check_suite_folder(out, suite.name, suite.seeds,
                       json.loads(json.dumps(describe(suite)["games"])))
    check_runs(runs)  # before anything is written
    # what each directory holds, read once: a folder of another suite is refused before any
    # work, and only run k writes run k's directory
    work = suite_jobs(runs, out, [held_by(run) for run in runs], suite.seeds[0])
    dispatcher.check(work, out)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "suite.json", json.dumps(describe(suite), indent=1))
    progress = SuiteProgress(runs, stream, dispatcher.jobs)
    events = _events(dispatcher, work, out)
    played: set = set()  # (game, seed) played head to head in this call
    try:
        for event, job, what in events:
            if not quiet and job.run is None:
                if event == "started":
                    progress.note(f"{job.name}: CFR+ and the tabular solvers for up to "
                                  f"{job.reference.budget_s:g} s each (unless measured "
                                  f"already), uniform policy")
            elif not quiet and event == "started":
                progress.starting(job.index, what if dispatcher.jobs > 1 else "")
            elif not quiet:
                progress.finished(job.index, what.row, _outcome(job.run, what), what.ran)
            if event != "started" and job.run is not None and job.run.game.tier == "large" \
                    and _seed_ended(job.run, runs, planned, out, played) and not quiet:
                progress.note(f"{job.run.game.label} · seed {job.run.seed}: its methods "
                              f"played head to head")
    finally:
        events.close()  # stops the jobs still running (an error, Ctrl-C)
    for game in chosen:
        if game.tier == "large":
            head_to_head(game, [r for r in planned if r.game is game and _measured(r)],
                         out / slug(game.label) / "head_to_head.json")
    return runs


def _events(dispatcher: Dispatcher, work: list[Job], out: Path) -> Iterator:
    """The dispatcher's events, after those of the runs that ended in an earlier call with
    nothing left to measure, which this process goes through first (each reads its records,
    and its large-tier measurement): a worker process each would cost more than they do. A
    large-tier run that ended before its measurement was written goes to the dispatcher,
    since the measurement can take an hour (an exact evaluation of a large meta-policy)."""
    ended = [job.run is not None and bool(job.held[0]) and
             (job.run.game.tier != "large" or bound_path(job.run).exists()) for job in work]
    yield from SequentialJobs().run([j for j, e in zip(work, ended, strict=True) if e], out)
    yield from dispatcher.run([j for j, e in zip(work, ended, strict=True) if not e], out)


def _measured(run: PlannedRun) -> bool:
    """Whether the run has ended and its large-tier measurement is written."""
    return run.finished and bound_path(run).exists()


def _seed_ended(run: PlannedRun, runs: list[PlannedRun], planned: list[PlannedRun], out: Path,
                played: set) -> bool:
    """Play the head-to-head games of ``run``'s game once every run of ``runs`` (those this
    call runs) of its game and seed has ended and been measured
    (:func:`psro.bench.evaluation.head_to_head`, over every measured run of the game in
    ``planned``, of any method and seed: a pair's per-seed records are kept, so each is played
    once), so that a suite stopped before its last seed keeps them. Returns whether it played
    (once a game and seed: ``played`` holds those played)."""
    if (id(run.game), run.seed) in played or not all(
            _measured(r) for r in runs if r.game is run.game and r.seed == run.seed):
        return False
    played.add((id(run.game), run.seed))
    head_to_head(run.game, [r for r in planned if r.game is run.game and _measured(r)],
                 out / slug(run.game.label) / "head_to_head.json")
    return True


def _outcome(run: PlannedRun, result: JobResult) -> str:
    """What a run's progress line adds to its last row: why it stopped short, and its
    large-tier measurement."""
    extra = f"; stopped: {result.stopped}" if result.stopped else ""
    if result.bound is not None:
        bound = result.bound
        extra += "; exact (compiled kernel): " if bound.get("exploitability_kind") == \
            "exact" else f"; lower bound at {run.game.response_steps:,} steps: "
        extra += f"{bound['exploitability']:.4g}"
    return extra


def select_games(suite: Suite, labels: Sequence[str] | None) -> list[SuiteGame]:
    """The games of ``suite`` named by ``labels`` (a game's label or its folder name,
    :func:`psro.bench.suites.slug`), in the suite's order; every game for None.
    :class:`ConfigError` naming the accepted labels for one the suite does not hold."""
    if labels is None:
        return list(suite.games)
    accepted = ", ".join(repr(g.label) for g in suite.games)
    if not labels:
        raise ConfigError(f"give at least one game; the suite's games are {accepted}")
    for label in labels:
        if not any(_names(g.label, label) for g in suite.games):
            raise ConfigError(f"suite {suite.name!r} has no game {label!r}; its games are "
                              f"{accepted}")
    return [g for g in suite.games if any(_names(g.label, label) for label in labels)]


def select_methods(runs: list[PlannedRun], games: list[SuiteGame],
                   labels: Sequence[str] | None) -> list[PlannedRun]:
    """The runs of ``runs`` whose method ``labels`` names (a method's label or its folder
    name); every run for None. :class:`ConfigError` naming the methods of ``games`` for a
    label none of them holds."""
    if labels is None:
        return runs
    held = list(dict.fromkeys(m.label for g in games for m in g.methods))
    accepted = ", ".join(repr(label) for label in held)
    if not labels:
        raise ConfigError(f"give at least one method; the games' methods are {accepted}")
    for label in labels:
        if not any(_names(m, label) for m in held):
            raise ConfigError(f"no game run holds a method {label!r}; their methods are "
                              f"{accepted}")
    return [r for r in runs if any(_names(r.method.label, label) for label in labels)]


def _names(own: str, label: str) -> bool:
    """Whether ``label`` is ``own`` (a game's or a method's label) or its folder name."""
    return label in (own, slug(own))


__all__ = ["PlannedRun", "SuiteProgress", "deterministic", "plan", "run_suite",
           "select_games", "select_methods"]
