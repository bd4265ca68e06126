"""Reading run directories of any format (see :mod:`psro.storage.checkpoint` for the layout)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from games.catalog import CATALOGUE_VERSION, current_spec
from psro.config import RunConfig, saved_config
from psro.errors import ConfigError, RunDirectoryError
from psro.metrics_row import merged_columns
from psro.payoffs import PayoffTable
from psro.state import RunState, joint_from_record
from psro.storage.checkpoint.legacy import LEGACY_VERSIONS, check_rows, load_legacy
from psro.storage.checkpoint.members import member_from_record, read_log, table_from_arrays
from psro.storage.checkpoint.table_records import apply_refined
from psro.storage.checkpoint.views import check_views, rebuild_metrics_csv, repair_metrics_csv
from psro.storage.checkpoint.writer import (
    FORMAT_VERSION,
    RUN_FOLDERS,
    RunWriter,
    _record_path,
    _Saved,
    config_digest,
)
from psro.storage.files import (
    append_bytes,
    as_path,
    atomic_write_bytes,
    atomic_write_text,
    checksum,
    jsonl,
    remove_temporary_files,
)
from psro.storage.text_files import read_json


@dataclass
class SavedRun:
    """A run directory read back: its config, state, manifest (``evaluation``,
    ``infoset_digest``, ``infoset_keys``), format version, and what its last record says
    (for a writer that continues it)."""

    path: Path
    config: RunConfig
    state: RunState
    manifest: dict
    format_version: int
    last: _Saved | None = None
    ended: bool | None = None
    """Whether the run ended (its last record holds a stop reason), False for one killed or
    still running, None for a run written before records held stop reasons."""

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns of ``metrics.csv``: those the run declared (``metric_columns`` in
        ``run.json``), then any key of its rows they lack (a run written before rows declared
        their columns has only the latter, in the order they first appear)."""
        return merged_columns(self.manifest.get("metric_columns") or (), self.state.metrics)

    def continued_columns(self, declared: tuple[str, ...]) -> tuple[str, ...]:
        """The columns of a resumed run whose parts now declare ``declared``: the run's own
        first (for a run from before rows declared theirs, ``declared``), then any key of
        ``declared`` or of its rows they lack."""
        own = self.manifest.get("metric_columns") or declared
        return merged_columns(own, [dict.fromkeys(declared), *self.state.metrics])

    def writer(self, columns: tuple[str, ...] | None = None) -> RunWriter:
        """A writer that continues this run: log files are cut back to what the last record
        vouches for (rebuilt from the records where they are shorter), and ``metrics.csv`` is
        rebuilt from the records wherever it differs from them (cut, lost, or written with
        shifted columns by an earlier version); a run of format 1 or 2 is converted to
        records first. ``columns``: those of ``metrics.csv`` from now on (by default
        :attr:`columns`); where they differ from ``run.json``'s, ``run.json`` records them."""
        columns = self.columns if columns is None else tuple(columns)
        writer = RunWriter(self.path, self.last, columns)
        writer.lock.acquire()
        remove_temporary_files(self.path)
        if self.format_version in LEGACY_VERSIONS:
            writer.convert(self.state, {**self.manifest, "metric_columns": list(columns)})
            return writer
        if list(columns) != self.manifest.get("metric_columns"):
            self.manifest["metric_columns"] = list(columns)
            atomic_write_text(self.path / "run.json", json.dumps(
                {"format_version": FORMAT_VERSION, **self.manifest}))
        rebuilt = {"metrics.jsonl": lambda: jsonl(self.state.metrics),
                   "mixtures.jsonl": lambda: jsonl(self.state.mixture_history),
                   "oracle_log.jsonl": lambda: jsonl(self.state.oracle_log)}
        log_rows = len(self.state.oracle_log)  # fewer than recorded if the log was cut
        self.last.log_rows_after = min(self.last.log_rows_after, log_rows)
        self.last.log_rows_before = min(self.last.log_rows_before, log_rows)
        for name in rebuilt:
            path, length = self.path / name, self.last.views_after[name]
            if path.is_file() and path.stat().st_size >= length:
                append_bytes(path, b"", length)
            else:
                data = rebuilt[name]()
                atomic_write_bytes(path, lambda h, d=data: h.write(d))
                self.last.views_after[name] = len(data)
        before, after = rebuild_metrics_csv(self.path, self.state.metrics, columns)
        self.last.views_before["metrics.csv"] = before
        self.last.views_after["metrics.csv"] = after
        return writer


def read_config(path: str | Path) -> RunConfig:
    """The run's ``config.json``; :class:`RunDirectoryError` when ``path`` is not a run."""
    path = Path(path)
    if not path.is_dir():
        raise RunDirectoryError(f"{path} is not a directory")
    file = path / "config.json"
    if not file.is_file():
        raise RunDirectoryError(f"{path} is not a run directory (no config.json)")
    try:
        data = read_json(file)
        return saved_config(data, source=str(file)).validate()
    except (ConfigError, TypeError) as err:
        raise RunDirectoryError(f"{file} is not a valid run config: {err}") from None
    except ValueError as err:
        raise RunDirectoryError(f"{file} is corrupt: {err}") from None


def load(path: str | Path, networks: bool = True, resume: bool = False) -> SavedRun:
    """Read a run directory of any format. With ``networks=False`` neural members are left
    unloaded (tables, payoffs and metrics only; no torch needed). Corrupt or incompatible files
    raise :class:`RunDirectoryError` and are left untouched, and so do a missing record, a
    symbolic link where the run keeps a folder or a log, and a log shorter than the records
    vouch for (with ``resume``, for a writer that continues the run, such a log is accepted:
    :meth:`SavedRun.writer` rebuilds it from the records)."""
    path = as_path(path, "the run directory")
    config = read_config(path)
    check_run_folders(path)
    manifest_file = path / "run.json"
    if not manifest_file.is_file():
        check_views(path, None)
        state, manifest, version = load_legacy(path, config, networks)
        return SavedRun(path, _renamed_games(config, manifest), state, manifest, version)
    try:
        manifest = read_json(manifest_file)
    except ValueError as err:
        raise RunDirectoryError(f"{manifest_file} is corrupt: {err}") from None
    if not isinstance(manifest, dict) or "format_version" not in manifest:
        raise RunDirectoryError(f"{manifest_file} is corrupt: it must hold a table with a "
                                f"format_version")
    version = manifest.pop("format_version")
    if version != FORMAT_VERSION:
        raise RunDirectoryError(f"{path} has format version {version!r}; this toolkit reads "
                                f"{', '.join(map(str, (*LEGACY_VERSIONS, FORMAT_VERSION)))}")
    records = _read_records(path)
    check_config_digest(path, records[-1][0].get("config_sha256"))
    try:
        state = _state_from_records(path, config, manifest, records, networks)
        check_rows(state, path)
    except RunDirectoryError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
        raise RunDirectoryError(f"run files in {path} are inconsistent: {err!r}") from None
    last = _Saved.from_meta(records[-1][0])
    check_views(path, None if resume else last)
    ended = None if "stop_reason" not in records[-1][0] else state.stop_reason is not None
    saved = SavedRun(path, _renamed_games(config, manifest), state, manifest, version, last,
                     ended)
    if not resume:
        repair_metrics_csv(path, state.metrics, saved.columns)
    return saved


def _renamed_games(config: RunConfig, manifest: dict) -> RunConfig:
    """The config of a run written before a catalogue game was renamed (its manifest has no
    or an older ``catalogue_version``) names the game it ran by its new name
    (:data:`games.catalog.RENAMED`: ``blotto`` is now OpenSpiel's game, the catalogue's is
    ``blotto_margin``)."""
    if manifest.get("catalogue_version", 1) >= CATALOGUE_VERSION:
        return config
    return dataclasses.replace(config, game=current_spec(config.game))


def check_config_digest(path: Path, recorded: str | None) -> None:
    """``config.json`` must be the file the run's records were made with (their
    ``config_sha256``; runs written before records held it are not checked): an edited config
    (another seed, another game) would label the records with settings they were not made
    with, or make a resume a hybrid of two runs."""
    if recorded is not None and config_digest(path) != recorded:
        raise RunDirectoryError(f"{path / 'config.json'} was changed after the run was written "
                                f"(it does not match the SHA-256 its records hold): its records "
                                f"were made with another config; restore the file, or start a "
                                f"new run with the settings you want")


def check_run_folders(path: Path) -> None:
    """A run's folders (``iterations``, ``networks``, ``tensorboard``, ``report``) must be its
    own directories: a symbolic link there, or a file, is refused (a writer would follow it
    out of the run directory)."""
    for name in RUN_FOLDERS:
        folder = path / name
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            kind = "a symbolic link" if folder.is_symlink() else "not a directory"
            raise RunDirectoryError(f"{folder} is {kind}; a run's folders must be its own "
                                    f"directories (it was left untouched)")


def _record_files(path: Path) -> list[Path]:
    """The record files, one per iteration from 0 with none missing."""
    folder = path / "iterations"
    numbers = sorted(int(entry.name[:6]) for entry in folder.iterdir()
                     if RUN_FOLDERS["iterations"].fullmatch(entry.name)) \
        if folder.is_dir() else []
    if not numbers:
        raise RunDirectoryError(f"{path} holds no saved iteration yet")
    missing = sorted(set(range(numbers[-1] + 1)) - set(numbers))
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise RunDirectoryError(f"{folder} has records up to iteration {numbers[-1]} but not "
                                f"those of iteration(s) {shown}: the run is damaged, and was "
                                f"left untouched")
    files = [_record_path(path, k) for k in numbers]
    linked = next((f for f in files if f.is_symlink() or not f.is_file()), None)
    if linked is not None:
        raise RunDirectoryError(f"record {linked} is not a regular file (a symbolic link or a "
                                f"folder); it was left untouched")
    return files


def _read_records(path: Path) -> list[tuple[dict, dict[str, np.ndarray]]]:
    records = []
    for file in _record_files(path):
        try:
            with np.load(file, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            meta = json.loads(str(arrays.pop("meta")))
            expected = meta.pop("checksum")
        except Exception as err:  # zipfile, OSError, ValueError, KeyError, JSON errors
            raise RunDirectoryError(f"record {file} is corrupt and was left untouched: "
                                    f"{type(err).__name__}: {err}") from None
        if checksum(meta, arrays) != expected:
            raise RunDirectoryError(f"record {file} does not match its checksum (changed after "
                                    f"it was written); it was left untouched")
        if meta.get("iteration") != len(records):
            raise RunDirectoryError(f"record {file} holds iteration {meta.get('iteration')!r}")
        records.append((meta, arrays))
    return records


def _state_from_records(path: Path, config: RunConfig, manifest: dict, records: list,
                        networks: bool) -> RunState:
    last = records[-1][0]
    n = len(last["sizes"])
    state = RunState.empty(n, manifest["evaluation"])
    values = np.zeros((n, *last["sizes"]))
    counts = np.zeros(tuple(last["sizes"]), dtype=np.int64)
    errors = np.zeros((n, *last["sizes"]))
    refined: dict[tuple[int, ...], int] = {}
    for meta, arrays in records:
        for p, joined in enumerate(meta["members"]):
            for info in joined:
                index = len(state.populations[p])
                table = table_from_arrays(arrays, p, index)
                state.populations[p].append(
                    member_from_record(path, p, index, dict(info), table, networks))
        if [len(pop) for pop in state.populations] != list(meta["sizes"]):
            raise ValueError(f"iteration {meta['iteration']} lists the wrong members")
        for b, block in enumerate(PayoffTable.new_blocks(tuple(meta["sizes_before"]),
                                                         tuple(meta["sizes"]))):
            index = tuple(block)
            values[(slice(None),) + index] = arrays[f"block{b}_values"]
            counts[index] = arrays[f"block{b}_counts"]
            errors[(slice(None),) + index] = arrays[f"block{b}_std_errs"]
        apply_refined(arrays, int(meta["iteration"]), values, counts, errors, refined)
        state.metrics.append(meta["metrics"])
        state.mixture_history.append(meta["mixtures"])
    state.table = PayoffTable.from_arrays(values, counts, errors, state.evaluation == "exact")
    state.table.refined = refined
    state.mixtures = [np.asarray(m, float) for m in last["mixtures"]["mixtures"]]
    if "joint" in last["mixtures"]:
        joint = joint_from_record(last["mixtures"]["joint"])
        if joint.shape != tuple(last["sizes"]):
            raise ValueError(f"the joint of iteration {last['iteration']} has shape "
                             f"{joint.shape}; the table has {tuple(last['sizes'])}")
    state.iteration = int(last["iteration"])
    state.wall_time_s = float(last["wall_time_s"])
    state.env_steps = int(last["env_steps"])
    state.stop_reason = last.get("stop_reason")
    state.oracle_log = read_log(path / "oracle_log.jsonl", int(last["oracle_log_rows"]))
    return state
