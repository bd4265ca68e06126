"""A suite's work as jobs that any process may run (:func:`execute`): each run of the suite,
with its shared measurement in the large tier (:func:`psro.bench.evaluation.shared_lower_bound`),
and each walkable game's reference lines. A job reads and writes only the files below its
``paths`` (relative to the suite's folder), so that a dispatcher that runs it on another machine
knows what to bring there and back (:mod:`psro.bench.ray_jobs`).

Jobs are listed in the order they start (:func:`suite_jobs`): the suite's runs in their order
(:func:`psro.bench.plan.plan`), and a walkable game's reference lines right after its first
seed's runs, so that they share those runs' machine conditions.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from psro.bench.folder import slug
from psro.bench.plan import PlannedRun, bound_path, held_by, run_one


@dataclass(frozen=True)
class Reference:
    """A walkable game's reference lines (:func:`psro.bench.references.reference`): written to
    ``folder/reference.json``, CFR+ for ``budget_s`` seconds with its ``thresholds``."""

    folder: Path
    game: str
    label: str
    budget_s: float
    thresholds: tuple[float, ...]


@dataclass(frozen=True)
class Job:
    """One job of a suite: a ``run`` (``index`` is its position among the suite's runs) or a
    game's ``reference`` lines (``index`` None); ``held`` is what the run's directory held when
    the suite was planned (:func:`psro.bench.plan.held_by`; None: read it when the job runs)."""

    run: PlannedRun | None = None
    reference: Reference | None = None
    index: int | None = None
    held: tuple | None = None

    @property
    def name(self) -> str:
        """The run's name, or ``reference lines of GAME``."""
        return self.run.name if self.run is not None else \
            f"reference lines of {self.reference.label}"

    def paths(self, out: Path) -> list[Path]:
        """What the job reads and writes, relative to the suite's folder ``out``: the run
        directory and the files beside it, or the reference file."""
        if self.run is None:
            return [(self.reference.folder / "reference.json").relative_to(out)]
        run = self.run
        return [p.relative_to(out) for p in (run.path, run.outcome_path, bound_path(run))]

    def moved(self, out: Path, to: Path) -> Job:
        """The same job with its files under ``to`` instead of ``out`` (read afresh there)."""
        if self.run is None:
            folder = to / self.reference.folder.relative_to(out)
            return replace(self, reference=replace(self.reference, folder=folder))
        run = replace(self.run, path=to / self.run.path.relative_to(out))
        return replace(self, run=run, held=None)


@dataclass
class JobResult:
    """How a job ended: a run's last metrics ``row``, why it ``stopped`` short of its budget
    (a meta-solver error, else None), whether it ``ran`` in this call (False: it had ended
    before), its large-tier ``bound`` (None elsewhere), and the job's ``seconds``."""

    row: dict | None = None
    stopped: str | None = None
    ran: bool = False
    bound: dict | None = None
    seconds: float = 0.0


def execute(job: Job, callbacks: tuple = ()) -> JobResult:
    """Run ``job`` in this process to its end (a run resumes where its directory stops);
    ``callbacks``: the run's, called after each of its iterations is saved
    (:class:`psro.PSRO`)."""
    from psro.bench import references
    from psro.bench.evaluation import shared_lower_bound

    start = time.perf_counter()
    if job.run is None:
        ref = job.reference
        references.reference(ref.folder, ref.game, ref.budget_s, ref.thresholds)
        return JobResult(seconds=time.perf_counter() - start)
    run = job.run
    held = job.held if job.held is not None else held_by(run)
    row, stopped, ran = run_one(run, held, callbacks)
    bound = shared_lower_bound(run, bound_path(run)) if run.game.tier == "large" else None
    return JobResult(row, stopped, ran, bound, time.perf_counter() - start)


def suite_jobs(runs: list[PlannedRun], out: Path, held: list[tuple],
               first_seed: int) -> list[Job]:
    """The jobs of ``runs`` (with what their directories ``held``) in the order they start,
    each walkable game's reference lines after its runs of ``first_seed``."""
    last_of_game = {id(r.game): k for k, r in enumerate(runs) if r.seed == first_seed}
    jobs = []
    for k, run in enumerate(runs):
        jobs.append(Job(run=run, index=k, held=held[k]))
        if run.game.tier == "walkable" and last_of_game.get(id(run.game)) == k:
            game = run.game
            jobs.append(Job(reference=Reference(out / slug(game.label), game.game, game.label,
                                                game.time_budget_s, game.thresholds)))
    return jobs
