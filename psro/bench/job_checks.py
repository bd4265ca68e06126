"""What a dispatcher of a suite's jobs checks before anything is written
(:mod:`psro.bench.dispatch`): the job count, the suite folder, the machine's cores."""

from __future__ import annotations

import os
from pathlib import Path

from psro.errors import ConfigError


def machine_cores() -> list[int]:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def check_writable(out: Path) -> None:
    """:class:`ConfigError` where the suite's folder ``out`` cannot be written (its nearest
    existing folder is not writable), before anything is written."""
    existing = Path(os.path.abspath(out))
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write the suite's folder {out}: {existing} is not writable "
                          f"by this user; choose another --out")


def check_job_count(jobs: int, runs: int) -> None:
    """:class:`ConfigError` for more jobs at once than the call has runs."""
    if jobs > runs:
        raise ConfigError(f"--jobs {jobs} is more than this call's {runs} run"
                          f"{'s' if runs != 1 else ''}; give at most {runs}")
