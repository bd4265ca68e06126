"""Writing run directories: one record per iteration, appended logs (see
:mod:`psro.storage.checkpoint` for the layout)."""

from __future__ import annotations

import io
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from psro.config import RunConfig
from psro.errors import RunDirectoryError
from psro.extensive_form.members import network_of
from psro.kernels.progress import RUN_PROGRESS_FILE
from psro.state import RunState
from psro.storage.checkpoint.members import network_files, network_path, table_arrays_of
from psro.storage.checkpoint.table_records import table_arrays
from psro.storage.files import (
    RUN_FILE_FOLDERS,
    TEMPORARY_FILE,
    append_bytes,
    as_path,
    atomic_write_bytes,
    atomic_write_text,
    checksum,
    config_digest,
    csv_rows,
    file_digest,
    foreign_entries,
    jsonl,
)
from psro.storage.lock import DirectoryLock

FORMAT_VERSION = 3
VIEWS = ("metrics.jsonl", "metrics.csv", "mixtures.jsonl", "oracle_log.jsonl")
"""Files appended after every iteration; each record holds their lengths."""


RUN_FILES = frozenset({"config.json", "run.json", *VIEWS, "checkpoint.npz", "payoffs.npz",
                       "population.npz", "population.json", "ppo_log.jsonl",
                       RUN_PROGRESS_FILE})
"""The files at the top of a run directory of any format (with an exact evaluation's
progress)."""
RUN_FOLDERS = {**RUN_FILE_FOLDERS, "report": None}
"""The folders of a run directory and the names the toolkit writes in each (``report`` is
``psro report``'s default output, which lists what it wrote in its own manifest)."""


def foreign_run_entries(path: Path) -> list[str]:
    """Everything in the run directory ``path`` that the toolkit did not write, as paths
    relative to it: unknown names, symbolic links, a folder where a file belongs or the
    reverse, and unknown files inside the run's folders."""
    foreign = []
    for entry in sorted(path.iterdir()):
        name = entry.name
        if name == ".lock" or (TEMPORARY_FILE.fullmatch(name) and not entry.is_symlink()):
            continue
        if entry.is_symlink():
            foreign.append(name)
        elif name in RUN_FILES:
            if not entry.is_file():
                foreign.append(name)
        elif name in RUN_FOLDERS and entry.is_dir():
            foreign += [f"{name}/{inner}" for inner in foreign_entries(entry, RUN_FOLDERS[name])]
        else:
            foreign.append(name)
    return foreign


def _check_replaceable(path: Path) -> None:
    """``--overwrite`` replaces a run and only a run: refuse a directory without a run's
    ``config.json`` or holding anything the toolkit did not write, in its folders too."""
    if not path.is_dir() or not (path / "config.json").is_file():
        raise RunDirectoryError(f"{path} does not hold a run; --overwrite only replaces an "
                                f"earlier run directory")
    foreign = foreign_run_entries(path)
    if foreign:
        raise RunDirectoryError(f"{path} holds files a run does not write ({foreign[0]}"
                                f"{', ...' if len(foreign) > 1 else ''}); --overwrite only "
                                f"replaces an earlier run directory, so nothing was removed")


def _remove_run_files(path: Path) -> list[str]:
    """Remove an earlier run's files (checked by :func:`_check_replaceable`); returns what was
    removed, in words."""
    removed = []
    for entry in sorted(path.iterdir()):
        if entry.name == ".lock":
            continue
        if entry.is_dir() and not entry.is_symlink():
            count = sum(1 for _ in entry.iterdir())
            shutil.rmtree(entry)
            removed.append(f"{entry.name}/ ({count} file{'s' if count != 1 else ''})")
        else:
            entry.unlink()
            if not TEMPORARY_FILE.fullmatch(entry.name):
                removed.append(entry.name)
    return removed


def _view_data(state: RunState, k: int, log_rows_before: int, log_rows: int,
               columns: tuple[str, ...]) -> dict[str, bytes]:
    """What iteration ``k`` appends to each log (``metrics.csv`` under ``columns``)."""
    row = state.metrics[k]
    return {"metrics.jsonl": jsonl([row]),
            "metrics.csv": csv_rows([row], header=k == 0, columns=columns),
            "mixtures.jsonl": jsonl([state.mixture_history[k]]),
            "oracle_log.jsonl": jsonl(state.oracle_log[log_rows_before:log_rows])}


def _record_path(directory: Path, iteration: int) -> Path:
    return Path(directory) / "iterations" / f"{iteration:06d}.npz"


@dataclass
class _Saved:
    """What the last record says: its iteration, and the population sizes, the lengths of the
    log files and the number of oracle log rows before and after it."""

    iteration: int
    sizes_before: tuple[int, ...]
    sizes_after: tuple[int, ...]
    views_before: dict[str, int]
    views_after: dict[str, int]
    log_rows_before: int
    log_rows_after: int

    @classmethod
    def from_meta(cls, meta: dict) -> _Saved:
        return cls(int(meta["iteration"]), tuple(meta["sizes_before"]), tuple(meta["sizes"]),
                   dict(meta["views_before"]), dict(meta["views"]),
                   int(meta["oracle_log_rows_before"]), int(meta["oracle_log_rows"]))


class RunWriter:
    """Writes one run directory. :meth:`create` starts a new one; :func:`load` returns a
    writer that continues an existing one. ``columns`` are those of ``metrics.csv``
    (:mod:`psro.metrics_row`): a row with a key outside them is refused, never written
    shifted."""

    def __init__(self, path: str | Path, last: _Saved | None = None,
                 columns: tuple[str, ...] = ()):
        self.path = Path(path)
        self.last = last
        self.columns = tuple(columns)
        self.config_digest = config_digest(self.path)
        """SHA-256 of ``config.json`` as the run wrote it (every record holds it, and every
        reader checks the file against it)."""
        self.removed: list[str] = []
        """What :meth:`create` removed of an earlier run (``overwrite``), in words."""
        self.lock = DirectoryLock(self.path)

    @classmethod
    def create(cls, path: str | Path, config: RunConfig, manifest: dict,
               overwrite: bool = False) -> RunWriter:
        """Start a run directory, which must be missing or empty: ``config.json`` and
        ``run.json``. ``manifest`` holds the evaluation name, the metrics columns
        (``metric_columns``) and, for exact runs, the information-state keys. With
        ``overwrite`` the directory may instead hold an earlier run (and nothing else), whose
        files are removed once its lock is taken.
        :class:`RunDirectoryError` for anything else."""
        path = as_path(path, "the run directory")
        replace = overwrite and path.is_dir() and any(path.iterdir())
        if replace:
            _check_replaceable(path)
        elif path.exists() and (not path.is_dir() or any(path.iterdir())):
            kind = "a directory that is not empty" if path.is_dir() else "not a directory"
            hint = " (or --overwrite to replace an earlier run there)" if path.is_dir() else ""
            raise RunDirectoryError(f"{path} is {kind}; a new run needs a missing or empty "
                                    f"directory{hint}")
        try:
            path.mkdir(parents=True, exist_ok=True)
            writer = cls(path, columns=tuple(manifest["metric_columns"]))
            writer.lock.acquire()
            if replace:
                _check_replaceable(path)  # again, now that no other run can write there
                writer.removed = _remove_run_files(path)
            atomic_write_text(path / "config.json", config.to_json())
            atomic_write_text(path / "run.json",
                              json.dumps({"format_version": FORMAT_VERSION, **manifest}))
            writer.config_digest = config_digest(path)
        except OSError as err:
            raise RunDirectoryError(f"cannot write the run directory {path}: "
                                    f"{err.strerror or err}") from None
        return writer

    def save(self, state: RunState) -> None:
        """Write what is new in ``state`` since the last save: the record of its iteration
        (rewritten when the iteration was saved already, e.g. after the final measurement
        updated its row), its networks and log rows."""
        self.lock.acquire()
        try:
            self._save(state)
        except OSError as err:
            raise RunDirectoryError(f"cannot write iteration {state.iteration} to {self.path}: "
                                    f"{err.strerror or err}; the files of the iterations "
                                    f"before it are kept") from None

    def _save(self, state: RunState) -> None:
        last, k = self.last, state.iteration
        if last is not None and k == last.iteration:
            self._write(state, k, last.sizes_before, last.views_before, last.log_rows_before)
        elif last is None and k == 0:
            self._write(state, k, (0,) * state.num_players, dict.fromkeys(VIEWS, 0), 0)
        elif last is not None and k == last.iteration + 1:
            self._write(state, k, last.sizes_after, last.views_after, last.log_rows_after)
        else:
            raise RuntimeError(f"iteration {k} cannot be saved after "
                               f"{None if last is None else last.iteration}")

    def _write(self, state: RunState, k: int, sizes_before: tuple[int, ...],
               views_before: dict[str, int], log_rows_before: int,
               sizes: tuple[int, ...] | None = None, log_rows: int | None = None,
               append: bool = True) -> None:
        """Write record ``k`` (members ``sizes_before`` to ``sizes``, log rows
        ``log_rows_before`` to ``log_rows``; by default everything up to now). The logs are
        appended first and the record written last; when either fails, the logs are cut back
        to ``views_before``, so they never hold an iteration that has no record. With
        ``append=False`` the logs are left alone (the record still holds the lengths they
        will have)."""
        sizes = state.sizes if sizes is None else tuple(sizes)
        log_rows = len(state.oracle_log) if log_rows is None else log_rows
        members, arrays = [], {}
        for p, pop in enumerate(state.populations):
            joined = []
            for index in range(sizes_before[p], sizes[p]):
                member = pop[index]
                network = network_of(member)
                vouched = {}
                if network is not None:
                    where = network_path(self.path, p, index)
                    network.save(where)
                    vouched = {"network_sha256": file_digest(*network_files(where))}
                if member.kind == "tabular":
                    arrays.update(table_arrays_of(member.probs, p, index))
                joined.append({"name": member.name, "kind": member.kind,
                               "network": network is not None, **vouched, **member.metadata})
            members.append(joined)
        arrays.update(table_arrays(state.table, k, sizes_before, sizes))
        row = state.metrics[k]
        data = _view_data(state, k, log_rows_before, log_rows, self.columns)
        if append:
            try:
                views_after = {name: append_bytes(self.path / name, data[name],
                                                  views_before[name]) for name in VIEWS}
            except OSError:
                self._cut_views(views_before)
                raise
        else:
            views_after = {name: views_before[name] + len(data[name]) for name in VIEWS}
        meta = {"format_version": FORMAT_VERSION, "iteration": k, "sizes": list(sizes),
                "sizes_before": list(sizes_before), "members": members, "metrics": row,
                "mixtures": state.mixture_history[k],
                "wall_time_s": state.wall_time_s if k == state.iteration else row["wall_time_s"],
                "env_steps": state.metrics[k].get("env_steps", state.env_steps),
                "oracle_log_rows": log_rows,
                "stop_reason": state.stop_reason if k == state.iteration else None,
                "oracle_log_rows_before": log_rows_before, "views_before": views_before,
                "views": views_after, "config_sha256": self.config_digest}
        meta["checksum"] = checksum(meta, arrays)
        record = io.BytesIO()  # built in memory, then written at once (not in small pieces)
        np.savez(record, meta=np.array(json.dumps(meta)), **arrays)
        try:
            atomic_write_bytes(_record_path(self.path, k), lambda h: h.write(record.getbuffer()))
        except OSError:
            if append:
                self._cut_views(views_before)
            raise
        self.last = _Saved(k, tuple(sizes_before), sizes, views_before, views_after,
                           log_rows_before, log_rows)

    def _cut_views(self, lengths: dict[str, int]) -> None:
        """Cut the logs back to ``lengths`` (after a failed save; best effort, as the disk that
        refused the save may refuse this too: a resume cuts them in any case)."""
        for name in VIEWS:
            try:
                append_bytes(self.path / name, b"", lengths[name])
            except OSError:
                pass

    def release(self) -> None:
        """Let another run take the directory (the next save takes the lock again)."""
        self.lock.release()

    def convert(self, state: RunState, manifest: dict) -> None:
        """Rewrite a run of format 1 or 2 as records (one per iteration, members and table
        blocks split by the population sizes of each iteration), then remove its old files."""
        sizes_before = (0,) * state.num_players
        views = dict.fromkeys(VIEWS, 0)
        log_rows = 0
        for k in range(state.iteration + 1):
            sizes = tuple(len(m) for m in state.mixture_history[k]["mixtures"])
            rows = sum(1 for r in state.oracle_log if r.get("iteration", 0) <= k)
            self._write(state, k, sizes_before, views, log_rows, sizes, rows, append=False)
            sizes_before, views, log_rows = sizes, self.last.views_after, rows
        # The logs last, whole: a conversion killed before run.json leaves the old run as it was
        # (its logs are what it held, but for metrics.csv, written after run.json in the
        # declared columns: where a kill comes first, readers and resumes rebuild it).
        logs = dict.fromkeys(VIEWS, b"")
        rows_before = 0
        for k in range(state.iteration + 1):
            rows = sum(1 for r in state.oracle_log if r.get("iteration", 0) <= k)
            for name, data in _view_data(state, k, rows_before, rows, self.columns).items():
                logs[name] += data
            rows_before = rows
        for name in (*(v for v in VIEWS if v != "metrics.csv"), "run.json", "metrics.csv"):
            if name == "run.json":
                atomic_write_text(self.path / "run.json",
                                  json.dumps({"format_version": FORMAT_VERSION, **manifest}))
            else:
                atomic_write_bytes(self.path / name, lambda h, d=logs[name]: h.write(d))
        for name in ("checkpoint.npz", "payoffs.npz", "population.npz", "population.json",
                     "ppo_log.jsonl"):
            (self.path / name).unlink(missing_ok=True)

