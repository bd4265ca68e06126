"""Where a suite's jobs run (:mod:`psro.bench.jobs`): one at a time in this process (the
default), ``jobs`` at once in worker processes on this machine (:mod:`psro.bench.local_jobs`),
or as tasks of a Ray cluster (:mod:`psro.bench.ray_jobs`).

A dispatcher has ``jobs`` (how many run at once), ``run_settings(settings)`` (the backend
settings every run of the suite gets: where its own tasks run), ``check(jobs, out)`` (refusals
before anything is written) and ``run(jobs, out)``, which yields ``("started", job, where)`` and
``("finished", job, result)`` as they happen, and stops every job still running when it is
closed early (an error, Ctrl-C). :func:`make_dispatcher` picks one; :func:`register` adds one
for a backend.

Whatever the dispatcher, each run's numbers are those of the run made alone: runs are seeded
and their tasks carry their seeds. Time budgets are the exception: they count wall time, so
each run of ``jobs`` at once gets cores of its own (:mod:`psro.bench.local_jobs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Protocol

from psro.bench.jobs import Job, JobResult, execute
from psro.errors import ConfigError


class Dispatcher(Protocol):
    """Runs a suite's jobs (see the module docstring)."""

    jobs: int

    def run_settings(self, settings: dict) -> dict:
        """The backend settings of every run, given the suite's (``backend``, ``workers``,
        ``ray_address``)."""

    def check(self, jobs: list[Job], out: Path) -> None:
        """:class:`ConfigError` where the jobs cannot run as asked; writes nothing."""

    def run(self, jobs: list[Job], out: Path) -> Iterator[tuple[str, Job, object]]:
        """Run the jobs of the suite's folder ``out``, in their order as room frees; yields
        their events."""


class SequentialJobs:
    """One job at a time, in this process, in order (the suite's default)."""

    jobs = 1

    def run_settings(self, settings: dict) -> dict:
        """The suite's settings as given."""
        return settings

    def check(self, jobs: list[Job], out: Path) -> None:
        """Nothing beyond the suite's own checks."""

    def run(self, jobs: list[Job], out: Path) -> Iterator[tuple[str, Job, JobResult | str]]:
        """Each job in turn."""
        for job in jobs:
            yield "started", job, "this process"
            yield "finished", job, execute(job)


DispatcherFactory = Callable[[int, dict], Dispatcher]


def _local(jobs: int, settings: dict) -> Dispatcher:
    from psro.bench.local_jobs import LocalJobs

    return LocalJobs(jobs)


def _ray(jobs: int, settings: dict) -> Dispatcher:
    from psro.bench.ray_jobs import RayJobs

    return RayJobs(jobs, settings.get("workers"), settings.get("ray_address"))


_DISPATCHERS: dict[str, DispatcherFactory] = {"ray": _ray}
"""Dispatchers of several jobs at once, by the backend they go with; every other backend runs
its suite's jobs in processes on this machine."""


def register(backend: str, factory: DispatcherFactory) -> None:
    """Have ``psro bench --backend BACKEND --jobs N`` dispatch with ``factory(N, settings)``.
    A backend that has one already is a :class:`ConfigError`."""
    if backend in _DISPATCHERS:
        raise ConfigError(f"backend {backend!r} has a suite dispatcher already")
    _DISPATCHERS[backend] = factory


def make_dispatcher(jobs: int | str | None, settings: dict) -> Dispatcher:
    """The dispatcher for ``jobs`` at once (``"auto"``: as many as there is room for; None:
    one at a time in this process, the tasks of each run on the suite's backend) and the
    suite's backend ``settings``. :class:`ConfigError` for a count
    that is neither a positive integer nor ``auto``."""
    if jobs != "auto" and (not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1) \
            and jobs is not None:
        raise ConfigError(f"--jobs must be a positive integer or auto (runs at once); got "
                          f"{jobs!r}")
    factory = _DISPATCHERS.get(settings.get("backend", ""))
    if jobs is None or (jobs == 1 and factory is None):
        return SequentialJobs()
    return (factory or _local)(jobs or 1, settings)


__all__ = ["Dispatcher", "SequentialJobs", "make_dispatcher", "register"]
