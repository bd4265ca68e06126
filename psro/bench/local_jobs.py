"""A suite's jobs, several at once, in worker processes on this machine (``psro bench --jobs
N``): N worker processes (the ``spawn`` method), each on a core set of its own, each running
one job after another as the suite hands them out (started once: a fresh process per job
spent some 10 s a job importing and warming up).

Fair time budgets: the machine's CPUs are split into ``N`` disjoint core sets, one per job
running (threads pinned with the process's CPU affinity, which its own worker processes
inherit), so that runs never share a core: a run's wall time under ``--jobs N`` is that of the
same run alone on a machine of ``cores / N`` cores. More jobs than cores are refused.

A worker's libraries get as many threads as its cores (``OMP_NUM_THREADS`` and the like, set
as it starts, and torch's): more threads than cores spin against each other. (A run's own
array work runs BLAS on one thread whatever these say: :mod:`psro.backends.threads`.)

Ctrl-C (or an error in a job) stops every job still running: each worker gets SIGINT (a run's
iterations are saved as they end, so the suite resumes from each run's last saved iteration),
then, after ``GRACE_S`` seconds, SIGTERM. The worker processes end with the suite's process
however it ends.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import signal
import sys
import traceback
from collections import deque
from collections.abc import Iterator
from multiprocessing.connection import wait
from pathlib import Path

from psro.backends.processes import end_with_parent
from psro.bench.job_checks import check_job_count, check_writable, machine_cores
from psro.bench.jobs import Job, JobResult, execute
from psro.errors import ConfigError, ToolkitError

GRACE_S = 20.0
"""How long a stopped job may take to end after SIGINT before it is terminated."""


def core_sets(cores: list[int], jobs: int) -> list[tuple[int, ...]]:
    """``cores`` split into ``jobs`` disjoint sets of consecutive CPUs, as even as they go."""
    size, extra = divmod(len(cores), jobs)
    sets, start = [], 0
    for k in range(jobs):
        end = start + size + (1 if k < extra else 0)
        sets.append(tuple(cores[start:end]))
        start = end
    return sets


class LocalJobs:
    """Runs ``jobs`` jobs at once on this machine (see the module docstring); ``"auto"``: one
    per CPU."""

    def __init__(self, jobs: int | str):
        self.cores = machine_cores()
        self.jobs = len(self.cores) if jobs == "auto" else int(jobs)

    def run_settings(self, settings: dict) -> dict:
        """The suite's settings as given: each run's tasks run where its backend says, on the
        run's cores."""
        return settings

    def check(self, jobs: list[Job], out: Path) -> None:
        """Refuse more jobs than CPUs or than runs, and a folder that cannot be written."""
        if self.jobs > len(self.cores):
            raise ConfigError(f"--jobs {self.jobs} is more than this machine's "
                              f"{len(self.cores)} CPU(s): each run of the suite gets cores of "
                              f"its own, so that time budgets stay fair; give at most "
                              f"{len(self.cores)}")
        check_job_count(self.jobs, sum(job.run is not None for job in jobs))
        check_writable(out)

    def run(self, jobs: list[Job], out: Path) -> Iterator[tuple[str, Job, JobResult | str]]:
        """Hand out jobs in order to the workers as they free; yields their events."""
        pending = deque(jobs)
        idle = deque(_Worker(cores) for cores in core_sets(self.cores, self.jobs))
        busy: dict = {}  # connection -> (worker, job)
        try:
            while pending or busy:
                while pending and idle:
                    worker, job = idle.popleft(), pending.popleft()
                    busy[worker.give(job)] = (worker, job)
                    yield "started", job, worker.where
                for conn in wait(list(busy)):
                    worker, job = busy.pop(conn)
                    result = worker.result(job)
                    idle.append(worker)
                    yield "finished", job, result
        finally:
            _stop([worker for worker, _ in busy.values()], list(idle))


class _Worker:
    """A worker process on ``cores``, started with its first job."""

    def __init__(self, cores: tuple[int, ...]):
        self.cores = cores
        self.where = f"core{'s' if len(cores) > 1 else ''} " + ",".join(map(str, cores))
        self.process = self.conn = None

    def give(self, job: Job):
        """Send ``job`` (starting the process first); the connection its result comes on."""
        if self.process is None:
            context = multiprocessing.get_context("spawn")
            self.conn, theirs = context.Pipe()
            self.process = context.Process(target=_worker_process, name="psro-suite-job",
                                           args=(self.cores, theirs, os.getpid()))
            with _threads(len(self.cores)):
                self.process.start()
            theirs.close()
        self.conn.send_bytes(pickle.dumps(job))
        return self.conn

    def result(self, job: Job) -> JobResult:
        """The job's result; its error raised here."""
        try:
            status, value = pickle.loads(self.conn.recv_bytes())
        except EOFError:
            self.process.join()
            raise RuntimeError(f"{job.name}: its worker process ended without a result (exit "
                               f"code {self.process.exitcode}); run the suite again to resume "
                               f"it") from None
        if status == "error":
            raise value
        return value


THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS")
"""The thread counts a worker process gets as its cores (libraries read them as they load)."""


@contextlib.contextmanager
def _threads(count: int):
    """The environment a job process starts with: ``count`` threads for every library."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, str(count)))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _stop(busy: list[_Worker], idle: list[_Worker]) -> None:
    """End the workers: idle ones are told to; busy ones get SIGINT, then SIGTERM after
    ``GRACE_S``."""
    for worker in idle:
        if worker.process is not None and worker.process.is_alive():
            worker.conn.send_bytes(b"")
    for worker in busy:
        if worker.process.is_alive():
            os.kill(worker.process.pid, signal.SIGINT)
    for worker in [*busy, *idle]:
        if worker.process is None:
            continue
        worker.process.join(GRACE_S)
        if worker.process.is_alive():
            worker.process.terminate()
            worker.process.join()
        worker.conn.close()


def _worker_process(cores: tuple[int, ...], conn, parent: int) -> None:
    """A worker process: pinned to ``cores``, runs the jobs it is sent until it is sent
    nothing, and sends back each one's result (or its error)."""
    end_with_parent(parent)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, cores)
    import torch

    torch.set_num_threads(len(cores))
    while True:
        try:
            blob = conn.recv_bytes()
        except (EOFError, KeyboardInterrupt):
            return
        if not blob:
            return
        try:
            result = ("ok", execute(pickle.loads(blob)))
        except KeyboardInterrupt:
            sys.exit(130)  # stopped: its last iteration is saved
        except Exception as err:  # raised again by the suite, as its own type where it pickles
            if not isinstance(err, ToolkitError):
                traceback.print_exc()  # the worker's traceback, on the suite's stderr
            try:
                pickle.loads(pickle.dumps(err))
                result = ("error", err)
            except Exception:
                result = ("error", RuntimeError(f"{type(err).__name__}: {err}"))
        conn.send_bytes(pickle.dumps(result))
