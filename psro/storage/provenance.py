"""What made a run: the toolkit's version and git commit (when it runs from a checkout, with a
flag for uncommitted changes), the versions of Python and of the libraries whose numbers it
depends on, and the platform. Recorded once in every run directory (``run.json``), shown by
``psro report``, and compared on ``--resume``."""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path

PACKAGES = ("open_spiel", "torch", "numpy", "scipy", "nashpy")
"""The libraries whose versions are recorded."""
GIT_TIMEOUT_S = 5.0
TOOLKIT_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the ``psro`` package (this file is ``psro/storage/provenance.py``): a
git checkout when the toolkit runs from one."""


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(root: Path) -> dict | None:
    """The commit of the checkout at ``root`` and whether tracked files differ from it; None
    when the toolkit is not run from a git checkout (or git is missing)."""
    if not (root / ".git").exists():
        return None
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                 "--untracked-files=no"],
                                capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if commit.returncode != 0 or status.returncode != 0:
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def provenance() -> dict:
    """This process's provenance: ``toolkit`` (version), ``git`` (``commit`` and ``dirty``, or
    None), ``python``, ``platform`` and ``packages`` (name -> version, None where missing)."""
    return {"toolkit": _version("psro-toolkit"),
            "git": _git(TOOLKIT_ROOT),
            "python": platform.python_version(), "platform": platform.platform(),
            "packages": {name: _version(name) for name in PACKAGES}}


def differences(saved: dict | None, current: dict) -> list[str]:
    """What differs between a run's recorded provenance and this process's, in words (empty
    when nothing that changes numbers differs, or the run recorded none; a commit is compared
    where the run recorded one)."""
    if not isinstance(saved, dict):
        return []
    changes = []
    before, now = saved.get("packages") or {}, current["packages"]
    for name in PACKAGES:
        if before.get(name) != now.get(name):
            changes.append(f"{name} {before.get(name)} -> {now.get(name)}")
    if saved.get("toolkit") != current["toolkit"]:
        changes.append(f"toolkit {saved.get('toolkit')} -> {current['toolkit']}")
    old_git, new_git = saved.get("git") or {}, current["git"] or {}
    if old_git.get("commit") is not None and old_git.get("commit") != new_git.get("commit"):
        changes.append(f"commit {str(old_git.get('commit'))[:10]} -> "
                       f"{str(new_git.get('commit'))[:10]}")
    if saved.get("python") != current["python"]:
        changes.append(f"python {saved.get('python')} -> {current['python']}")
    return changes


def summary(record: dict | None) -> str:
    """A provenance record in one line (for reports)."""
    if not isinstance(record, dict):
        return "not recorded"
    git = record.get("git") or {}
    commit = f", commit {str(git.get('commit'))[:10]}{' (dirty)' if git.get('dirty') else ''}" \
        if git else ""
    packages = ", ".join(f"{k} {v}" for k, v in (record.get("packages") or {}).items() if v)
    return f"toolkit {record.get('toolkit')}{commit}; python {record.get('python')}; {packages}"
