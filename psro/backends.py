"""Where independent tasks (oracle calls, payoff-table blocks) run.

A task is a plain function and its arguments, with no shared mutable state, so any backend
can run it anywhere. ``local`` runs tasks in order in this process; a Ray backend (issue: Ray
engine) will map the same tasks onto a cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


class LocalBackend:
    """Runs every task in this process, in order (deterministic)."""

    name = "local"

    def map(self, fn: Callable[..., Any], tasks: Sequence[tuple]) -> list[Any]:
        return [fn(*args) for args in tasks]


BACKENDS = {"local": LocalBackend}


def make_backend(name: str):
    """The backend called ``name``; ``ValueError`` listing the accepted names otherwise."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; accepted: {', '.join(BACKENDS)}")
    return BACKENDS[name]()
