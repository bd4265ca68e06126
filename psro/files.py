"""File writing for run directories: atomic replacement (a killed process leaves the old file
or the new one, never a half-written one), appends that never follow links, JSON lines, CSV
rows and checksums."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from psro.errors import RunDirectoryError


def atomic_write_bytes(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write through ``write(file)`` to a temporary file beside ``path``, flush it to disk, then
    rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, lambda h: h.write(text.encode()))


def jsonl(rows: list[dict]) -> bytes:
    """One JSON object per line."""
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def csv_cell(value) -> str:
    """A CSV cell: empty for None, ``repr`` for floats (exact round trip)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def csv_rows(rows: list[dict], header: bool) -> bytes:
    """CSV lines of ``rows`` with the first row's keys as columns (and a header line)."""
    if not rows:
        return b""
    fields = list(rows[0])
    lines = [",".join(fields)] if header else []
    lines += [",".join(csv_cell(row.get(k)) for k in fields) for row in rows]
    return ("\n".join(lines) + "\n").encode()


def file_digest(*paths: Path) -> str:
    """SHA-256 over the bytes of ``paths`` in order (a network's ``.pt`` and ``.json``)."""
    digest = hashlib.sha256()
    for path in paths:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()


def checksum(meta: dict, arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over a JSON-able dict and named arrays (their bytes in key order)."""
    digest = hashlib.sha256(json.dumps(meta, sort_keys=True).encode())
    for key in sorted(arrays):
        digest.update(key.encode())
        digest.update(np.ascontiguousarray(arrays[key]).tobytes())
    return digest.hexdigest()


def append_bytes(path: Path, data: bytes, keep: int) -> int:
    """Cut ``path`` to its first ``keep`` bytes, append ``data`` and return the new length.
    The file is created by the run and never followed through a symbolic link."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        if os.fstat(fd).st_size != keep:
            os.ftruncate(fd, keep)
        os.lseek(fd, keep, os.SEEK_SET)
        os.write(fd, data)
        return keep + len(data)
    finally:
        os.close(fd)


def remove_temporary_files(directory: Path) -> None:
    """Delete the temporary files that a killed :func:`atomic_write_bytes` left in
    ``directory`` and its ``iterations`` and ``networks`` folders."""
    for folder in (directory, directory / "iterations", directory / "networks"):
        if folder.is_dir() and not folder.is_symlink():
            for leftover in folder.glob(".*.tmp"):
                leftover.unlink(missing_ok=True)


class DirectoryLock:
    """An exclusive OS lock (``flock``) on ``DIR/.lock``, held while a run writes ``DIR``. The
    operating system releases it when the process dies, however it dies."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / ".lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (no-op when held); :class:`RunDirectoryError` when another run holds
        it."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as err:
            raise RunDirectoryError(f"cannot lock {self.path.parent}: {err.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunDirectoryError(f"{self.path.parent} is in use by another run (it holds "
                                    f"the directory's lock); wait for it to end or use another "
                                    f"directory") from None
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (no-op when not held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.release()
