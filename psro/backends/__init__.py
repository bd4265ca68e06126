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

import os
from collections.abc import Callable

from psro.backends.base import Backend, LocalBackend, Task
from psro.backends.processes import ProcessBackend
from psro.backends.ray import RayBackend, check_ray
from psro.errors import ConfigError, UnreadSettingError


def _ray_backend(workers: int | None = None, address: str | None = None) -> Backend:
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


def max_workers(name: str) -> int | None:
    """The most workers backend ``name`` can use, where it declares a bound (a
    ``max_workers`` attribute of its factory; ``local`` runs one task at a time), else None
    (also for an unknown name)."""
    return getattr(_BACKENDS.get(name), "max_workers", None)


def _check_settings(name: str, workers: int | None, address: str | None) -> None:
    if address is not None and name != "ray":
        raise ConfigError(f"--ray-address (ray_address) needs --backend ray; the backend is "
                          f"{name!r}")
    if name not in _BACKENDS:
        raise ConfigError(f"unknown backend {name!r}; accepted: {', '.join(_BACKENDS)}")
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)
                                or workers < 1):
        raise ConfigError(f"workers must be a positive integer (or unset: one per CPU); got "
                          f"{workers!r}")
    most = max_workers(name)
    if workers is not None and most is not None and workers > most:
        raise UnreadSettingError(f"workers {workers} has no effect with backend {name!r}: it "
                                 f"runs at most {most} task{'s' if most > 1 else ''} at a time; "
                                 f"use backend 'processes' or 'ray', or leave workers unset",
                                 "workers")
    local = name in ("local", "processes") or (name == "ray" and address is None)
    limit = local_worker_limit() if local else MAX_CLUSTER_WORKERS
    if workers is not None and workers > limit:
        where = f"this machine has {os.cpu_count() or 1} CPU(s)" if local else \
            "a Ray cluster"
        raise ConfigError(f"workers must be at most {limit:,} for backend {name!r} ({where}; "
                          f"each worker process holds its own copy of the game and networks); "
                          f"got {workers:,}")


def check_backend(name: str, workers: int | None = None, address: str | None = None) -> None:
    """Refuse, with a :class:`ConfigError`, what :func:`make_backend` would refuse, and for the
    built-in ``ray`` backend also a missing Ray or an address that is neither ``auto`` nor a
    reachable ``HOST:PORT``, without building or starting anything (``psro bench`` checks its
    backend this way before it writes)."""
    _check_settings(name, workers, address)
    if _BACKENDS[name] is _ray_backend:
        check_ray(address)


def make_backend(name: str, workers: int | None = None, address: str | None = None) -> Backend:
    """The backend called ``name`` with ``workers`` workers (None: its default); ``address``
    is the Ray cluster of the ``ray`` backend. :class:`ConfigError` for an unknown name, a
    worker count that is not a positive integer, or an address for another backend (Ray itself
    is checked when the backend starts)."""
    _check_settings(name, workers, address)
    return _BACKENDS[name](workers, address) if address is not None else \
        _BACKENDS[name](workers)


__all__ = ["Backend", "LocalBackend", "ProcessBackend", "RayBackend", "Task",
           "check_backend", "local_worker_limit", "make_backend", "max_workers", "names",
           "register"]
