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
suite goes on.

Order: seed by seed, and within a seed game by game and method by method, so that a slow spell
of the machine falls on every method alike; a game's reference lines are measured right after
its first seed's runs. A finished run is skipped, a killed one resumed,
so the command can be run again after an interruption and continues where it stopped; a call
may run some of the suite's games only (``games``), into the same folder. A method
whose configuration reads no seed (exact oracle, deterministic meta-solver) runs its first seed
only: every seed would give the same run. A run directory that holds another configuration
than the suite's is refused, naming it, and so is a folder that holds another suite, or other
things and no ``suite.json``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from psro.bench import references
from psro.bench.evaluation import head_to_head, shared_lower_bound
from psro.bench.folder import check_suite_folder, slug
from psro.bench.preflight import check_runs, refusal
from psro.bench.suites import (
    Method,
    Suite,
    SuiteGame,
    check_suite,
    describe,
    run_config,
)
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


def _finished(run: PlannedRun) -> tuple[dict | bool | None, dict | None]:
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


def _run_one(run: PlannedRun, held: tuple[dict | bool | None, dict | None]
             ) -> tuple[dict, str | None, bool]:
    """Run (or resume, or leave as it is when it ended) one planned run, given what its
    directory holds (:func:`_finished`): its last row, and why it stopped short of its budget
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
            psro_run = PSRO(config=run.config, out=run.path)
        except ConfigError as err:
            raise ConfigError(refusal(run, err)) from None
    else:
        psro_run = PSRO.resume(run.path)
        psro_run.use_backend(run.config.backend, run.config.workers, run.config.ray_address)
    try:
        last, error, reason = psro_run.run()[-1], None, psro_run.stop_reason
    except MetaSolverError as err:
        last = psro_run.metrics[-1]  # the last saved iteration, before the failed meta-solve
        error, reason = str(err), "meta_solver_failed"
    atomic_write_text(run.outcome_path, json.dumps(
        {"iteration": last["iteration"], "stop_reason": reason, "error": error}, indent=1))
    return last, error, True


class SuiteProgress:
    """The suite's progress lines: which run of how many, the suite's time so far and the time
    left, then each run's outcome. The time left sums, over the remaining runs, how long the
    runs of the same game and method took (else of the same game): "about" that much; runs of
    games not timed yet count with their budgets, "at most". A run that ended in an earlier
    call counts with its recorded wall time (one resumed: the longer of that and this call's)."""

    def __init__(self, runs: list[PlannedRun], stream: TextIO | None = None):
        import sys

        self.runs, self.stream = runs, stream or sys.stdout
        self.start = time.perf_counter()
        self.began = self.start
        self.took: dict[tuple[str, str], list[float]] = {}

    def left(self, k: int) -> tuple[float, float, int]:
        """For the runs from ``k`` on: the seconds the timed ones should take (from the times
        of their game's runs), and the budgets and count of the others."""
        timed, budgets, untimed = 0.0, 0.0, 0
        for run in self.runs[k:]:
            same = self.took.get((run.game.label, run.method.label))
            seen = same or [t for (g, _), ts in self.took.items() if g == run.game.label
                            for t in ts]
            if seen:
                timed += min(run.game.time_budget_s, sum(seen) / len(seen))
            else:
                budgets += run.game.time_budget_s
                untimed += 1
        return timed, budgets, untimed

    def left_text(self, k: int) -> str:
        """The time left in words: "about 6m left", "at most 3h left", or both ("about 6m
        left, and at most 3h for 6 runs of games not timed yet")."""
        from psro.cli.progress import duration

        timed, budgets, untimed = self.left(k)
        if not untimed:
            return f"about {duration(timed)} left"
        if timed == 0:
            return f"at most {duration(budgets)} left"
        return f"about {duration(timed)} left, and at most {duration(budgets)} for " \
               f"{untimed} run{'s' if untimed > 1 else ''} of games not timed yet"

    def starting(self, k: int) -> None:
        """Before run ``k`` (0-based)."""
        from psro.cli.progress import duration

        self.began = time.perf_counter()
        print(f"[{k + 1}/{len(self.runs)}] {self.runs[k].name}  (suite "
              f"{duration(self.began - self.start)}, {self.left_text(k)})", file=self.stream,
              flush=True)

    def finished(self, k: int, row: dict, extra: str = "", ran: bool = True) -> None:
        """After run ``k``, with its last metrics row (``ran``: False where it was skipped)."""
        run, recorded = self.runs[k], float(row.get("wall_time_s") or 0.0)
        took = max(recorded, time.perf_counter() - self.began) if ran else recorded
        self.took.setdefault((run.game.label, run.method.label), []).append(took)
        value = row.get("exploitability")  # none where the suite measures the bound
        kind = " (lower bound)" if row.get("exploitability_kind") == \
            "approximate_lower_bound" else ""
        shown = "" if value is None else f"exploitability {value:.4g}{kind}, "
        print(f"      {shown}iteration {row['iteration']}, "
              f"{row['wall_time_s']:.1f} s, {row.get('env_steps') or 0:,} env steps{extra}"
              f"{'' if ran else ' (finished earlier)'}", file=self.stream, flush=True)


def run_suite(suite: Suite, out: str | Path, overrides: dict | None = None,
              stream: TextIO | None = None, quiet: bool = False,
              games: Sequence[str] | None = None) -> list[PlannedRun]:
    """Run every run of ``suite`` into ``out`` (see the module docstring), then the reference
    lines (walkable tier) and the shared-budget lower bounds and head-to-head results (large
    tier). ``overrides``: RunConfig fields for every run (``backend``, ``workers``,
    ``ray_address``). ``games``: run only these games (labels, or their folder names), leaving
    the others' folders as they are; ``suite.json`` still describes the whole suite, so that
    calls for different games fill one folder and one report (a game's results do not depend
    on the others'). Returns the planned runs (of the games run)."""
    out = Path(out)
    unknown = sorted(set(overrides or {}) - {"backend", "workers", "ray_address"})
    if unknown:
        raise ConfigError(f"{', '.join(unknown)} cannot be set for a whole suite; a suite sets "
                          f"backend, workers and ray_address")
    suite = check_suite(suite)
    chosen = select_games(suite, games)
    runs = [r for r in plan(suite, out, overrides) if r.game in chosen]
    check_suite_folder(out, suite.name, suite.seeds,
                       json.loads(json.dumps(describe(suite)["games"])))
    check_runs(runs)  # before anything is written
    # what each directory holds, read once: a folder of another suite is refused before any
    # work, and only run k writes run k's directory
    held = [_finished(run) for run in runs]
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / "suite.json", json.dumps(describe(suite), indent=1))
    progress = SuiteProgress(runs, stream)
    last_of_game = {id(r.game): k for k, r in enumerate(runs) if r.seed == suite.seeds[0]}
    for k, run in enumerate(runs):
        if not quiet:
            progress.starting(k)
        row, stopped, ran = _run_one(run, held[k])
        extra = f"; stopped: {stopped}" if stopped else ""
        if run.game.tier == "large":
            bound = shared_lower_bound(run, _bound_path(run))
            extra += "; exact (compiled kernel): " if bound.get("exploitability_kind") == \
                "exact" else f"; lower bound at {run.game.response_steps:,} steps: "
            extra += f"{bound['exploitability']:.4g}"
        if not quiet:
            progress.finished(k, row, extra, ran)
        if run.game.tier == "walkable" and last_of_game.get(id(run.game)) == k:
            # beside the game's first-seed runs, so that it shares their machine conditions
            if not quiet:
                print(f"      reference lines of {run.game.label}: CFR+ for "
                      f"{run.game.time_budget_s:g} s (unless measured already), uniform policy",
                      file=progress.stream, flush=True)
            references.reference(out / slug(run.game.label), run.game.game,
                                 run.game.time_budget_s, run.game.thresholds)
    for game in chosen:
        if game.tier == "large":
            head_to_head(game, [r for r in runs if r.game is game],
                         out / slug(game.label) / "head_to_head.json")
    return runs


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
        if not any(_names(g, label) for g in suite.games):
            raise ConfigError(f"suite {suite.name!r} has no game {label!r}; its games are "
                              f"{accepted}")
    return [g for g in suite.games if any(_names(g, label) for label in labels)]


def _names(game: SuiteGame, label: str) -> bool:
    """Whether ``label`` is ``game``'s label or its folder name."""
    return label in (game.label, slug(game.label))


def _bound_path(run: PlannedRun) -> Path:
    return run.path.with_name(f"{run.path.name}.bound.json")
