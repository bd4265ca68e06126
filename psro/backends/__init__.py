"""Where independent tasks (best-response training, sampled payoff estimates) run.

A :class:`Task` is a plain module-level function and its arguments, with no shared mutable
state, so any backend can run it anywhere and return the same result: every task carries its
own seed, so the backend never changes a run's numbers. A backend has ``run(tasks) -> results``
(in task order), ``close()`` and a ``workers`` count; :func:`register` adds one by name.

- ``local``: tasks run in order in this process.
- ``processes``: tasks run in parallel on a pool of worker processes on this machine (spawned
  once, on first use, and reused). Worth it where tasks are long, e.g. the PPO oracle's one
  training task per player: on a 2-core machine a two-player iteration's oracle time roughly
  halves. A single task runs in this process.
- ``ray``: tasks run as Ray tasks, on this machine or a cluster (:mod:`psro.backends.ray`).

A backend may also have ``where() -> str``, where its tasks run in words (``psro run`` prints
it once).
"""

import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, NamedTuple, Protocol

from psro.errors import ConfigError


class Task(NamedTuple):
    """One unit of work: ``fn(*args)``; ``fn`` is a module-level function (so it pickles)."""

    fn: Callable[..., Any]
    args: tuple


class Backend(Protocol):
    """Runs tasks and returns their results in task order; exceptions propagate."""

    name: str
    workers: int

    def run(self, tasks: Sequence[Task]) -> list[Any]:
        """Run the tasks; their results in task order."""

    def close(self) -> None:
        """Release the workers (no-op where there are none)."""


class LocalBackend:
    """Runs every task in this process, in order."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = 1

    def where(self) -> str:
        """Where the tasks run, in words."""
        return "backend local: tasks run in this process"

    def run(self, tasks: Sequence[Task]) -> list[Any]:
        """Run each task in this process, in order."""
        return [task.fn(*task.args) for task in tasks]

    def close(self) -> None:
        """Nothing to release."""
        pass


class ProcessBackend:
    """Runs tasks on ``workers`` worker processes (default: the machine's CPU count).

    Workers are started with the ``spawn`` method (safe with torch and OpenMP) by
    :meth:`start` (a run calls it when it is built, so its first iteration's ``oracle_s`` is
    training, not start-up) or else the first time more than one task is run; :meth:`close`
    stops them (the interpreter also does at exit).
    Tasks must pickle; results come back in task order. An exception in a task is raised here,
    from :meth:`run`. A worker that dies (killed, out of memory) breaks the pool: the pool is
    started anew and the tasks without a result run again, up to ``RETRIES`` times (tasks are
    pure and seeded, so a rerun returns what the first run would have).
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
                                   initializer=_end_with_parent, initargs=(os.getpid(),))

    def start(self) -> None:
        """Start the worker processes now and have each import the training code (torch,
        OpenSpiel, the toolkit), so that the first tasks do not pay for it. Nothing with one
        worker (tasks then run in this process)."""
        if self.workers == 1 or self._pool is not None:
            return
        self._pool = self._new_pool()
        for future in [self._pool.submit(_warm_up) for _ in range(self.workers)]:
            future.result()

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
        """Shut the worker pool down."""
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None


_PROTOCOL = pickle.HIGHEST_PROTOCOL


def _end_with_parent(parent: int) -> None:
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


def _warm_up() -> None:
    """Import what training and sampled-evaluation tasks use (in a worker process)."""
    import psro.evaluation.sampled  # noqa: F401
    import psro.rl.ppo  # noqa: F401


def _call_pickled(blob: bytes) -> bytes:
    """Run a task sent as plain pickle bytes and return its result the same way.

    Tasks and results travel as bytes because multiprocessing's own pickler, once torch is
    imported, shares every tensor through a file descriptor that stays open as long as the
    tensor lives: a population of networks exhausts the process's descriptors (seen after
    about 280 Leduc PPO iterations). Plain pickle copies the tensors' data instead.
    """
    fn, args = pickle.loads(blob)
    return pickle.dumps(fn(*args), _PROTOCOL)


def _ray_backend(workers: int | None = None, address: str | None = None) -> Backend:
    from psro.backends.ray import RayBackend

    return RayBackend(workers, address)


MAX_CLUSTER_WORKERS = 4096
"""Most workers of a backend that joins a Ray cluster."""


def local_worker_limit() -> int:
    """Most workers of a backend on this machine: four per CPU (tasks are CPU-bound, and each
    worker process costs a few hundred MB)."""
    return 4 * (os.cpu_count() or 1)


BackendFactory = Callable[..., Backend]
_BACKENDS: dict[str, BackendFactory] = {"local": LocalBackend, "processes": ProcessBackend,
                                        "ray": _ray_backend}


def register(name: str, factory: BackendFactory) -> None:
    """Make ``factory(workers)`` available as backend ``name`` (``--backend NAME``,
    ``backend = "NAME"``). Registering a taken name is a :class:`ConfigError`."""
    if name in _BACKENDS:
        raise ConfigError(f"backend {name!r} is already registered")
    _BACKENDS[name] = factory


def names() -> tuple[str, ...]:
    """Every registered backend name."""
    return tuple(_BACKENDS)


def make_backend(name: str, workers: int | None = None, address: str | None = None) -> Backend:
    """The backend called ``name`` with ``workers`` workers (None: its default); ``address``
    is the Ray cluster of the ``ray`` backend. :class:`ConfigError` for an unknown name, a
    worker count that is not a positive integer, or an address for another backend."""
    if address is not None and name != "ray":
        raise ConfigError(f"--ray-address (ray_address) needs --backend ray; the backend is "
                          f"{name!r}")
    if name not in _BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; accepted: {', '.join(_BACKENDS)}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)
                                or workers < 1):
        raise ConfigError(f"workers must be a positive integer (or unset: one per CPU); got "
                          f"{workers!r}")
    local = name in ("local", "processes") or (name == "ray" and address is None)
    limit = local_worker_limit() if local else MAX_CLUSTER_WORKERS
    if workers is not None and workers > limit:
        where = f"this machine has {os.cpu_count() or 1} CPU(s)" if local else \
            "a Ray cluster"
        raise ConfigError(f"workers must be at most {limit:,} for backend {name!r} ({where}; "
                          f"each worker process holds its own copy of the game and networks); "
                          f"got {workers:,}")
    return _BACKENDS[name](workers, address) if address is not None else \
        _BACKENDS[name](workers)
