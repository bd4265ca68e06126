"""The backend interface: a :class:`Task` (a module-level function and its arguments, pure and
seeded, so any backend returns the same result), the :class:`Backend` protocol, and the
``local`` backend, which runs tasks in this process in order."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol


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
    max_workers = 1
    """It runs one task at a time: more workers are refused (:func:`psro.backends.make_backend`),
    not ignored."""

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
