"""A job's files between the suite's folder and a node that shares no file system with it
(:mod:`psro.bench.ray_jobs`).

:class:`FolderKeeper` runs beside the suite's folder (a Ray actor on the driver's node): it hands
out a job's files (:meth:`~FolderKeeper.pull`) and writes those sent back
(:meth:`~FolderKeeper.push`), each atomically. :class:`FolderCopy` is the job's side: a local
folder filled from the keeper, whose changed files it sends back after each of the run's
iterations and when the job ends.

Order keeps the suite's folder a run directory that resumes: the files of a run directory
reach it before the iteration records that vouch for them (``iterations/``), and those before
the run's outcome and measurement beside it; a copy cut short anywhere (the node lost, the
driver killed) leaves records whose files are there, and logs at least as long as the records
say (a resume cuts them back).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from psro.storage.files import TEMPORARY_FILE, atomic_write_bytes


def _copied(path: Path) -> bool:
    """Whether a file is copied: never a run's lock (it belongs to the process that holds it)
    or a temporary file being written."""
    return path.is_file() and path.name != ".lock" and not TEMPORARY_FILE.fullmatch(path.name)


def folder_files(root: Path, paths: list[str]) -> list[Path]:
    """The files under ``root`` at ``paths`` (files, or folders walked), in sending order:
    by the order of ``paths``, a run directory's records after its other files."""
    found = []
    for rank, rel in enumerate(paths):
        path = root / rel
        if path.is_dir():
            inside = [f for f in path.rglob("*") if _copied(f)]
            found += [(rank, "iterations" in f.relative_to(path).parts[:1], str(f), f)
                      for f in inside]
        elif path.is_file():
            found.append((rank, False, str(path), path))
    return [f for *_, f in sorted(found)]


class FolderKeeper:
    """The suite folder's side (see the module docstring); ``out`` is the suite's folder."""

    def __init__(self, out: str):
        self.out = Path(out)
        self.events: list[tuple[int, str]] = []

    def pull(self, paths: list[str]) -> list[tuple[str, bytes]]:
        """Every file at ``paths`` (relative to the folder), as (relative path, bytes)."""
        return [(str(f.relative_to(self.out)), f.read_bytes())
                for f in folder_files(self.out, paths)]

    def push(self, files: list[tuple[str, bytes]]) -> None:
        """Write each (relative path, bytes) into the folder, atomically, in order."""
        for rel, data in files:
            target = self.out / rel
            if self.out.resolve() not in target.resolve().parents:
                raise ValueError(f"{rel} is outside the suite's folder")
            atomic_write_bytes(target, lambda handle, data=data: handle.write(data))

    def started(self, position: int, where: str) -> None:
        """Note that the job at ``position`` started ``where``."""
        self.events.append((position, where))

    def take_events(self) -> list[tuple[int, str]]:
        """The start notes since the last call."""
        events, self.events = self.events, []
        return events


class FolderCopy:
    """A job's files in the local folder ``root``, kept in step with a keeper (an object
    with ``pull`` and ``push`` as :class:`FolderKeeper`'s, called through ``call``)."""

    def __init__(self, root: Path, paths: list[str], keeper, call):
        self.root, self.paths, self.keeper, self.call = root, paths, keeper, call
        self.sent: dict[str, str] = {}

    def fill(self) -> None:
        """Copy the job's files from the keeper into the local folder."""
        for rel, data in self.call(self.keeper.pull, self.paths):
            target = self.root / rel
            atomic_write_bytes(target, lambda handle, data=data: handle.write(data))
            self.sent[rel] = hashlib.sha256(data).hexdigest()

    def send(self) -> int:
        """Send the files changed since the last call (or :meth:`fill`); how many."""
        changed, digests = [], {}
        for path in folder_files(self.root, self.paths):
            rel = str(path.relative_to(self.root))
            data = path.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if self.sent.get(rel) != digest:
                changed.append((rel, data))
                digests[rel] = digest
        if changed:
            self.call(self.keeper.push, changed)
            self.sent.update(digests)
        return len(changed)
