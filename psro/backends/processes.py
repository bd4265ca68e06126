"""The ``processes`` backend: tasks run in parallel on a pool of worker processes on this
machine, which end with their driver however it ends."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from psro.backends.base import LocalBackend, Task
from psro.backends.threads import blas_on_one_thread_for_good
from psro.errors import BackendError


class ProcessBackend:
    """Runs tasks on ``workers`` worker processes (default: the machine's CPU count).

    Workers are started with the ``spawn`` method (safe with torch and OpenMP) by
    :meth:`start` (a run calls it when it is built, so its first iteration's ``oracle_s`` is
    training, not start-up) or else the first time more than one task is run; :meth:`close`
    stops them (the interpreter also does at exit).
    Tasks must pickle; results come back in task order. An exception in a task is raised here,
    from :meth:`run`. Workers that die as they start are a :class:`~psro.errors.BackendError`. A
    worker that dies (killed, out of memory) breaks the pool: the pool is started anew and the
    tasks without a result run again, up to ``RETRIES`` times (tasks are pure and seeded, so a
    rerun returns what the first run would have).
    """

    name = "processes"
    RETRIES = 2

    def __init__(self, workers: int | None = None):
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self._pool: ProcessPoolExecutor | None = None

    def where(self) -> str:
        """Where the tasks run, in words."""
        return f"backend processes: {self.workers} worker process(es) on this machine"

    def _new_pool(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(os.getpid(),))

    def start(self, warm: Sequence[str] = ()) -> None:
        """Start the worker processes now and have each import the modules ``warm`` (those of
        the run's parts: the training code, torch, OpenSpiel), so that the first tasks do not
        pay for it. Nothing with one worker (tasks then run in this process)."""
        if self.workers == 1 or self._pool is not None:
            return
        self._pool = self._new_pool()
        try:
            for future in [self._pool.submit(_warm_up, tuple(warm))
                           for _ in range(self.workers)]:
                future.result()
        except BrokenProcessPool:
            self.close()
            raise BackendError(_START_FAILED) from None

    def run(self, tasks: Sequence[Task]) -> list[Any]:
        """Run the tasks on the worker pool; a broken pool (a killed worker) is restarted and
        its tasks retried."""
        if len(tasks) <= 1 or self.workers == 1:
            return LocalBackend().run(tasks)
        blobs = [pickle.dumps(tuple(task), _PROTOCOL) for task in tasks]
        results: list[Any] = [None] * len(tasks)
        pending = list(range(len(tasks)))
        for _ in range(self.RETRIES + 1):
            if self._pool is None:
                self._pool = self._new_pool()
            futures = {i: self._pool.submit(_call_pickled, blobs[i]) for i in pending}
            broken = []
            for i, future in futures.items():
                try:
                    results[i] = pickle.loads(future.result())
                except BrokenProcessPool:
                    broken.append(i)
            if not broken:
                return results
            self.close()
            pending = broken
        raise BrokenProcessPool(f"a worker process died running the same task "
                                f"{self.RETRIES + 1} times")

    def close(self) -> None:
        """Stop the worker processes now, tasks still running on them included: a run closes
        its backend when it ends, and when it ends early (Ctrl-C, SIGTERM, an error) their
        results would be thrown away anyway (the run resumes from its last saved iteration).
        Waiting for them instead kept a stopped PPO run alive for as long as its best responses
        had left to train."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        processes = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(timeout=10)


_PROTOCOL = pickle.HIGHEST_PROTOCOL
_START_FAILED = (
    "backend 'processes': its worker processes died as they started (their own errors, if "
    "any, are printed above); where a Python script starts the run, it must do so under "
    "`if __name__ == \"__main__\":`, as each worker imports the script again (multiprocessing's "
    "spawn method) and without the guard that import starts a run of its own")


def _start_worker(parent: int) -> None:
    """A worker process's start: it ends with the driver (:func:`end_with_parent`) and its
    BLAS runs on one thread (:mod:`psro.backends.threads`: the workers share the machine's cores,
    and BLAS threads beyond a worker's share spin against each other)."""
    end_with_parent(parent)
    blas_on_one_thread_for_good()


def end_with_parent(parent: int) -> None:
    """In a worker process: end when the driver ends, however it ends (killed included), so
    no worker outlives its run. Linux is asked to kill the worker with its parent; elsewhere
    (and as a fallback) a thread watches the parent's pid."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent ended before this worker was ready
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="end-with-driver").start()


def _warm_up(modules: tuple[str, ...]) -> None:
    """Import ``modules`` (in a worker process)."""
    for name in modules:
        importlib.import_module(name)


def _call_pickled(blob: bytes) -> bytes:
    """Run a task sent as plain pickle bytes and return its result the same way.

    Tasks and results travel as bytes because multiprocessing's own pickler, once torch is
    imported, shares every tensor through a file descriptor that stays open as long as the
    tensor lives: a population of networks exhausts the process's descriptors (seen after
    about 280 Leduc PPO iterations). Plain pickle copies the tensors' data instead.
    """
    fn, args = pickle.loads(blob)
    return pickle.dumps(fn(*args), _PROTOCOL)
