"""Writing files: atomic replacement (a killed process leaves the old file or the new one,
never a half-written one), appends that never follow links, JSON lines, CSV rows, checksums,
locks, and what the toolkit may replace (files it wrote; never links, folders, devices or a
command's own inputs). Reading user files safely is :mod:`psro.storage.text_files`."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np

from psro.errors import RunDirectoryError
from psro.storage.text_files import read_json


def as_path(value, what: str) -> Path:
    """``value`` (a str or an ``os.PathLike``) as a Path; :class:`RunDirectoryError` naming
    ``what`` for anything else and for an empty name (which ``Path`` reads as ``.``, the
    working directory)."""
    if not isinstance(value, (str, os.PathLike)):
        raise RunDirectoryError(f"{what} must be a path (a str or os.PathLike); got "
                                f"{type(value).__name__}")
    if not str(value).strip():
        raise RunDirectoryError(f"{what} must be named (it was empty)")
    return Path(value)


def atomic_write_bytes(path: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write through ``write(file)`` to a temporary file beside ``path``, flush it to disk, then
    rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; a run folder is for sharing
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process's umask, read without changing it where Linux shows it."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: Path, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, lambda h: h.write(text.encode()))


def jsonl(rows: list[dict]) -> bytes:
    """One JSON object per line."""
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def csv_cell(value) -> str:
    """A CSV cell: empty for None, ``repr`` for floats (exact round trip), quoted where the
    text holds a comma, a quote or a line break (RFC 4180)."""
    if value is None:
        return ""
    text = repr(value) if isinstance(value, float) else str(value)
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def csv_rows(rows: list[dict], header: bool, columns: tuple[str, ...] | list[str]) -> bytes:
    """CSV lines of ``rows`` under the declared ``columns`` (and a header line first with
    ``header``): a column a row lacks is an empty cell; a key that is not a column is a
    ``ValueError`` (a row is never written shifted)."""
    for row in rows:
        unknown = [key for key in row if key not in columns]
        if unknown:
            raise ValueError(f"metrics row of iteration {row.get('iteration')!r} has keys "
                             f"{unknown} that are not among the declared columns")
    lines = [",".join(map(csv_cell, columns))] if header and rows else []
    lines += [",".join(csv_cell(row.get(k)) for k in columns) for row in rows]
    return "".join(line + "\n" for line in lines).encode()


def config_digest(directory: Path) -> str | None:
    """SHA-256 of ``directory/config.json``'s bytes (None where it cannot be read)."""
    try:
        return hashlib.sha256((Path(directory) / "config.json").read_bytes()).hexdigest()
    except OSError:
        return None


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


TEMPORARY_FILE = re.compile(r"\..+\.tmp")
"""Names of the temporary files :func:`atomic_write_bytes` makes (removed when found)."""
MANIFEST = ".psro-files.json"
"""The file in which a writer of a whole folder (``psro report``) lists what it wrote."""


def written_files(folder: Path) -> set[str]:
    """The names the folder's :data:`MANIFEST` lists (empty when it has none or it cannot be
    read)."""
    try:
        names = read_json(Path(folder) / MANIFEST, limit=16 * 2**20)
    except ValueError:
        return set()
    files = names.get("files") if isinstance(names, dict) else None
    return {n for n in files if isinstance(n, str)} if isinstance(files, list) else set()


def record_written_files(folder: Path, names: list[str]) -> None:
    """Write the folder's :data:`MANIFEST`: the files the toolkit wrote there."""
    atomic_write_text(Path(folder) / MANIFEST, json.dumps({"files": sorted(names)}))


def foreign_entries(folder: Path, own: re.Pattern | None = None) -> list[str]:
    """Entries of ``folder`` the toolkit did not write: not listed in its :data:`MANIFEST`,
    not matching ``own`` (names the writer always uses), not a regular file (directories and
    symbolic links included), ignoring the lock and temporary files. Sorted names."""
    folder = Path(folder)
    listed = written_files(folder) | {MANIFEST, ".lock"}
    foreign = []
    for entry in sorted(folder.iterdir()):
        name = entry.name
        if TEMPORARY_FILE.fullmatch(name) and not entry.is_symlink():
            continue
        known = name in listed or (own is not None and own.fullmatch(name) is not None)
        if not known or entry.is_symlink() or not entry.is_file():
            foreign.append(name)
    return foreign


RUN_FILE_FOLDERS = {"iterations": re.compile(r"\d{6}\.npz"),
                    "networks": re.compile(r"player\d+_member\d+\.(pt|json)"),
                    "tensorboard": re.compile(r"events\.out\.tfevents\..+")}
"""The folders a run directory keeps its own files in, and the names the run writes in each."""


def run_directory_of(path: Path) -> Path | None:
    """The run directory whose files ``path`` would be among (its folder holds ``config.json``
    and ``run.json``, or that folder's parent does and it is one of
    :data:`RUN_FILE_FOLDERS`), or None."""
    folder = Path(path).parent
    for candidate in (folder, folder.parent if folder.name in RUN_FILE_FOLDERS else None):
        if candidate is not None and (candidate / "config.json").is_file() \
                and (candidate / "run.json").is_file():
            return candidate
    return None


def check_new_file(path: Path, what: str, inputs: tuple[Path, ...] = (),
                   replace: bool = False) -> None:
    """Refuse to write ``what`` at ``path`` when something is there that must not be replaced:
    a directory, a symbolic link, a device or other special file, one of ``inputs`` (the
    files being read), or, unless ``replace``, any existing file; and anywhere among a run
    directory's files (replacing its ``config.json`` destroyed the run). ``ValueError`` with
    one line; the caller names its option."""
    path = Path(path)
    run = run_directory_of(path)
    if run is not None:
        raise ValueError(f"{what} {path} is among the files of the run directory {run}, which "
                         f"holds its run's files only; write it elsewhere")
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        if not path.parent.is_dir():
            raise ValueError(f"{what} {path}: its folder {path.parent} does not exist") \
                from None
        return
    except OSError as err:
        raise ValueError(f"{what} {path} cannot be checked: {err.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise ValueError(f"{what} {path} is a symbolic link; it is never written through")
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise ValueError(f"{what} {path} is {kind}; only a new file is written")
    for source in inputs:
        try:
            if os.path.samefile(path, source):
                raise ValueError(f"{what} {path} is also an input ({source}); it is not "
                                 f"replaced")
        except FileNotFoundError:
            continue
    if not replace:
        raise ValueError(f"{what} {path} already exists")


def earlier_output(out: Path) -> dict[str, int]:
    """For a writer that fills a whole folder (``psro report``): the folder must be empty or
    hold that writer's earlier output and nothing else (what its :data:`MANIFEST` lists);
    ``ValueError`` naming the first foreign entry otherwise. Returns the earlier files with
    their inode numbers, for :func:`finish_output`."""
    foreign = foreign_entries(out)
    if foreign:
        more = " and more" if len(foreign) > 1 else ""
        raise ValueError(f"it holds {foreign[0]}{more}, which the toolkit did not write there")
    return {name: (out / name).stat().st_ino for name in written_files(out)
            if (out / name).is_file()}


def finish_output(out: Path, earlier: dict[str, int]) -> None:
    """After a writer filled ``out`` (every file written whole by :func:`atomic_write_bytes`,
    so under a new inode): remove the earlier files it did not write again (their inode is
    unchanged), then list what the folder holds in its :data:`MANIFEST`."""
    for name, inode in earlier.items():
        file = out / name
        if file.is_file() and not file.is_symlink() and file.stat().st_ino == inode:
            file.unlink()
    names = [entry.name for entry in out.iterdir() if entry.is_file()
             and not entry.is_symlink() and entry.name not in (MANIFEST, ".lock")
             and not TEMPORARY_FILE.fullmatch(entry.name)]
    record_written_files(out, names)
