"""Where independent tasks (best-response training, sampled payoff estimates) run.

A task is a plain module-level function and its arguments, with no shared mutable state, so
any backend can run it anywhere and return the same result: every task carries its own seed,
so the backend never changes a run's numbers.

- ``local``: tasks run in order in this process.
- ``processes``: tasks run in parallel on a pool of worker processes on this machine (spawned
  once, on first use, and reused). Worth it where tasks are long, e.g. the PPO oracle's one
  training task per player: on a 2-core machine a two-player iteration's oracle time roughly
  halves. A single task runs in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any


class LocalBackend:
    """Runs every task in this process, in order."""

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = 1

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        return [fn(*args) for args in tasks]

    def close(self) -> None:
        pass


class ProcessBackend:
    """Runs tasks on ``workers`` worker processes (default: the machine's CPU count).

    Workers are started with the ``spawn`` method (safe with torch and OpenMP) the first time
    more than one task is mapped; :meth:`close` stops them (the interpreter also does at
    exit). ``fn`` and the arguments must pickle; results come back in task order. An exception
    in a task is raised here, from :meth:`map`.
    """

    name = "processes"

    def __init__(self, workers: int | None = None):
        self.workers = (os.cpu_count() or 1) if workers is None else int(workers)
        if self.workers < 1:
            raise ValueError(f"workers must be a positive integer; got {workers!r}")
        self._pool: ProcessPoolExecutor | None = None

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        if len(tasks) <= 1 or self.workers == 1:
            return [fn(*args) for args in tasks]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(self.workers,
                                             mp_context=multiprocessing.get_context("spawn"))
        futures = [self._pool.submit(_call_pickled, pickle.dumps((fn, args), _PROTOCOL))
                   for args in tasks]
        return [pickle.loads(future.result()) for future in futures]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


_PROTOCOL = pickle.HIGHEST_PROTOCOL


def _call_pickled(blob: bytes) -> bytes:
    """Run a task sent as plain pickle bytes and return its result the same way.

    Tasks and results travel as bytes because multiprocessing's own pickler, once torch is
    imported, shares every tensor through a file descriptor that stays open as long as the
    tensor lives: a population of networks exhausts the process's descriptors (seen after
    about 280 Leduc PPO iterations). Plain pickle copies the tensors' data instead.
    """
    fn, args = pickle.loads(blob)
    return pickle.dumps(fn(*args), _PROTOCOL)


BACKENDS = {"local": LocalBackend, "processes": ProcessBackend}


def make_backend(name: str, workers: int | None = None):
    """The backend called ``name``; ``ValueError`` listing the accepted names otherwise."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; accepted: {', '.join(BACKENDS)}")
    return BACKENDS[name](workers)
