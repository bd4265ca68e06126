"""The ``ray`` backend: tasks run as Ray tasks, on this machine or on a Ray cluster.

Ray is an extra (``pip install -e ".[ray]"``, included in the ``test`` extra) and is imported
only when a run uses this backend. ``address``: None starts a private local Ray with
``workers`` CPUs (the default: one per CPU) the first time tasks run; ``"auto"`` joins the
cluster that ``ray start`` made on this machine; ``"HOST:PORT"`` joins that one.

Every task carries its own seed (see :mod:`psro.backends`), so the numbers are those of the
``local`` and ``processes`` backends. The arguments that the tasks of one call share (the
game, the opponents' tables or networks) go into the object store once per call, not once
per task. Each Ray task asks for one CPU, and the PPO task runs torch with one thread.

Faults: a worker process that dies mid-task (killed, out of memory, its node lost) is
retried by Ray up to ``MAX_RETRIES`` times (tasks are pure and seeded, so a retry returns
what the first attempt would have); an exception raised by the task itself is not retried
but raised here, with the worker's traceback in its message.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from psro.backends.base import Task
from psro.errors import ConfigError, ToolkitError

MAX_RETRIES = 3
CONNECT_TIMEOUT_S = 5.0
"""How long a HOST:PORT address may take to accept a connection."""
"""Attempts after a worker process dies mid-task (Ray's ``max_retries``)."""
SHARED = (int, float, str, bool, bytes, type(None))
"""Argument types passed inline; every other argument goes into the object store once per
call."""


def _ray():
    try:
        import ray
    except ImportError:
        raise ConfigError('backend "ray" needs Ray: pip install -e ".[ray]" (the ray extra)') \
            from None
    return ray


def _check_reachable(address: str | None) -> None:
    """A ``HOST:PORT`` address must accept a connection within ``CONNECT_TIMEOUT_S`` seconds
    (Ray itself would keep trying for minutes)."""
    if address is None or address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"--ray-address must be auto or HOST:PORT; got {address!r}")
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as err:
        raise ConfigError(f"cannot reach a Ray cluster at --ray-address {address!r}: "
                          f"{err.strerror or err}") from None


def check_ray(address: str | None = None) -> None:
    """:class:`ConfigError` where Ray is not installed, or where ``address`` is neither None,
    ``auto`` nor a ``HOST:PORT`` that accepts a connection; starts nothing."""
    _ray()
    _check_reachable(address)


def _call(fn, *args):
    """Run one task in a Ray worker."""
    return fn(*args)


class RayBackend:
    """Runs tasks as Ray tasks (see the module docstring)."""

    name = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None):
        self.workers = (os.cpu_count() or 1) if workers is None else workers
        self.address = address
        self._remote = None
        self._owns = False

    def start(self, warm: Sequence[str] = ()) -> None:
        """Start (or join) Ray now; :class:`ConfigError` for Ray missing or an unreachable
        address."""
        if self._remote is not None:
            return
        ray = _ray()
        if not ray.is_initialized():
            _check_reachable(self.address)
            try:
                if self.address is None:  # "local": a private Ray, even beside a cluster
                    ray.init(address="local", num_cpus=self.workers, include_dashboard=False,
                             log_to_driver=False, configure_logging=False)
                else:
                    ray.init(address=self.address, log_to_driver=False,
                             configure_logging=False)
            except (ConnectionError, RuntimeError, ValueError) as err:
                first = str(err).strip().splitlines()[0] if str(err).strip() else \
                    type(err).__name__
                raise ConfigError(f"cannot reach a Ray cluster at --ray-address "
                                  f"{self.address!r}: {first}") from None
            self._owns = True
        self._remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES,
                                  retry_exceptions=False)(_call)

    def where(self) -> str:
        """Where the tasks run, in words (started on first use)."""
        self.start()
        ray = _ray()
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        cpus = sum(int(n.get("Resources", {}).get("CPU", 0)) for n in nodes)
        place = "a private local Ray" if self.address is None else \
            f"the Ray cluster at {self.address}"
        return f"backend ray: {place}, {len(nodes)} node(s), {cpus} CPU(s)"

    def run(self, tasks: Sequence[Task]) -> list[Any]:
        """Run the tasks on Ray; results in task order. A task's own exception is raised
        here (as its original type, the worker's traceback in the message)."""
        if not tasks:
            return []
        self.start()
        ray = _ray()
        stored: dict[int, Any] = {}

        def shared(arg):
            if isinstance(arg, SHARED):
                return arg
            if id(arg) not in stored:
                stored[id(arg)] = ray.put(arg)
            return stored[id(arg)]

        refs = [self._remote.remote(task.fn, *[shared(a) for a in task.args])
                for task in tasks]
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as err:
            if isinstance(err.cause, ToolkitError):  # a refusal: its own one-line message
                raise err.cause from None
            raise err.as_instanceof_cause() from None

    def close(self) -> None:
        """Shut down the Ray this backend started (a joined cluster keeps running)."""
        if self._owns:
            _ray().shutdown()
            self._owns = False
        self._remote = None


__all__ = ["MAX_RETRIES", "RayBackend", "check_ray"]
