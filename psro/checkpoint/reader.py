"""Reading run directories of any format (see :mod:`psro.checkpoint` for the layout)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from psro.checkpoint.legacy import LEGACY_VERSIONS, check_rows, load_legacy
from psro.checkpoint.members import member_from_record, read_log
from psro.checkpoint.writer import FORMAT_VERSION, VIEWS, RunWriter, _record_path, _Saved
from psro.config import RunConfig
from psro.errors import ConfigError, RunDirectoryError
from psro.files import (
    append_bytes,
    atomic_write_bytes,
    checksum,
    csv_rows,
    jsonl,
    remove_temporary_files,
)
from psro.payoffs import PayoffTable
from psro.state import RunState, joint_from_record


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

    def writer(self) -> RunWriter:
        """A writer that continues this run: log files are cut back to what the last record
        vouches for (rebuilt from the records where they are shorter); a run of format 1 or 2
        is converted to records first."""
        writer = RunWriter(self.path, self.last)
        writer.lock.acquire()
        remove_temporary_files(self.path)
        if self.format_version in LEGACY_VERSIONS:
            writer.convert(self.state, self.manifest)
            return writer
        rebuilt = {"metrics.jsonl": lambda: jsonl(self.state.metrics),
                   "metrics.csv": lambda: csv_rows(self.state.metrics, header=True),
                   "mixtures.jsonl": lambda: jsonl(self.state.mixture_history),
                   "oracle_log.jsonl": lambda: jsonl(self.state.oracle_log)}
        log_rows = len(self.state.oracle_log)  # fewer than recorded if the log was cut
        self.last.log_rows_after = min(self.last.log_rows_after, log_rows)
        self.last.log_rows_before = min(self.last.log_rows_before, log_rows)
        for name in VIEWS:
            path, length = self.path / name, self.last.views_after[name]
            if path.is_symlink():
                path.unlink()
            if path.is_file() and path.stat().st_size >= length:
                append_bytes(path, b"", length)
            else:
                data = rebuilt[name]()
                atomic_write_bytes(path, lambda h, d=data: h.write(d))
                self.last.views_after[name] = len(data)
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
        data = json.loads(file.read_text())
        return RunConfig.from_dict(data, source=str(file)).validate()
    except (json.JSONDecodeError, UnicodeDecodeError, OSError) as err:
        raise RunDirectoryError(f"{file} is corrupt: {err}") from None
    except (ConfigError, TypeError) as err:
        raise RunDirectoryError(f"{file} is not a valid run config: {err}") from None


def load(path: str | Path, networks: bool = True) -> SavedRun:
    """Read a run directory of any format. With ``networks=False`` neural members are left
    unloaded (tables, payoffs and metrics only; no torch needed). Corrupt or incompatible files
    raise :class:`RunDirectoryError` and are left untouched."""
    path = Path(path)
    config = read_config(path)
    manifest_file = path / "run.json"
    if not manifest_file.is_file():
        state, manifest, version = load_legacy(path, config, networks)
        return SavedRun(path, config, state, manifest, version)
    try:
        manifest = json.loads(manifest_file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RunDirectoryError(f"{manifest_file} is corrupt: {err}") from None
    if not isinstance(manifest, dict) or "format_version" not in manifest:
        raise RunDirectoryError(f"{manifest_file} is corrupt: it must hold a table with a "
                                f"format_version")
    version = manifest.pop("format_version")
    if version != FORMAT_VERSION:
        raise RunDirectoryError(f"{path} has format version {version!r}; this toolkit reads "
                                f"{', '.join(map(str, (*LEGACY_VERSIONS, FORMAT_VERSION)))}")
    records = _read_records(path)
    try:
        state = _state_from_records(path, config, manifest, records, networks)
        check_rows(state, path)
    except RunDirectoryError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
        raise RunDirectoryError(f"run files in {path} are inconsistent: {err!r}") from None
    return SavedRun(path, config, state, manifest, version, _Saved.from_meta(records[-1][0]))


def _read_records(path: Path) -> list[tuple[dict, dict[str, np.ndarray]]]:
    records = []
    while _record_path(path, len(records)).is_file():
        file = _record_path(path, len(records))
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
    if not records:
        raise RunDirectoryError(f"{path} holds no saved iteration yet")
    return records


def _state_from_records(path: Path, config: RunConfig, manifest: dict, records: list,
                        networks: bool) -> RunState:
    last = records[-1][0]
    n = len(last["sizes"])
    state = RunState.empty(n, manifest["evaluation"])
    values = np.zeros((n, *last["sizes"]))
    counts = np.zeros(tuple(last["sizes"]), dtype=np.int64)
    errors = np.zeros((n, *last["sizes"]))
    for meta, arrays in records:
        for p, joined in enumerate(meta["members"]):
            for info in joined:
                index = len(state.populations[p])
                state.populations[p].append(
                    member_from_record(path, p, index, dict(info), arrays.get(f"table_{p}_{index}"),
                            networks))
        if [len(pop) for pop in state.populations] != list(meta["sizes"]):
            raise ValueError(f"iteration {meta['iteration']} lists the wrong members")
        for b, block in enumerate(PayoffTable.new_blocks(tuple(meta["sizes_before"]),
                                                         tuple(meta["sizes"]))):
            index = tuple(block)
            values[(slice(None),) + index] = arrays[f"block{b}_values"]
            counts[index] = arrays[f"block{b}_counts"]
            errors[(slice(None),) + index] = arrays[f"block{b}_std_errs"]
        state.metrics.append(meta["metrics"])
        state.mixture_history.append(meta["mixtures"])
    state.table = PayoffTable.from_arrays(values, counts, errors, state.evaluation == "exact")
    state.mixtures = [np.asarray(m, float) for m in last["mixtures"]["mixtures"]]
    if "joint" in last["mixtures"]:
        state.joint = joint_from_record(last["mixtures"]["joint"])
        if state.joint.shape != tuple(last["sizes"]):
            raise ValueError(f"the joint of iteration {last['iteration']} has shape "
                             f"{state.joint.shape}; the table has {tuple(last['sizes'])}")
    state.iteration = int(last["iteration"])
    state.wall_time_s = float(last["wall_time_s"])
    state.env_steps = int(last["env_steps"])
    state.oracle_log = read_log(path / "oracle_log.jsonl", int(last["oracle_log_rows"]))
    return state
