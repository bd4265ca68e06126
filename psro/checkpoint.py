"""Run directories: the only code that knows their layout. :class:`RunWriter` saves a run
after every iteration; :func:`load` reads any run directory back into a config and a
:class:`~psro.state.RunState`.

Layout (format ``FORMAT_VERSION``; nothing is pickled):

- ``config.json``: the :class:`~psro.config.RunConfig`, written once;
- ``run.json``: the format version, how the run is evaluated (``"exact"`` or ``"sampled"``)
  and, for exact runs, every player's information-state keys and their digest;
- ``iterations/NNNNNN.npz``: one record per iteration, written once (atomically: temporary
  file, fsync, rename): the members that joined, their tables, the payoff-table entries that
  were evaluated, the metrics row, the meta-strategies, the clocks, and the byte length of
  every log file after it, with a SHA-256 checksum over all of it;
- ``networks/player{p}_member{k}.pt`` + ``.json``: neural members (state dict + metadata);
- ``metrics.csv``, ``metrics.jsonl``, ``mixtures.jsonl``, ``oracle_log.jsonl``: appended
  after every iteration (one row per iteration; the oracle's diagnostics rows).

Saving an iteration costs the same whatever the run's length. A killed run leaves complete
records only; a resume trusts the records, cuts every log back to the length the last record
vouches for (rebuilding the metrics and mixtures files from the records if they are shorter),
and continues. Directories of formats 1 and 2 (``checkpoint.npz``, rewritten every iteration)
are read as they are, and converted to records when resumed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from psro.config import RunConfig
from psro.errors import ConfigError, RunDirectoryError
from psro.files import (
    append_bytes,
    atomic_write_bytes,
    atomic_write_text,
    checksum,
    csv_rows,
    jsonl,
)
from psro.legacy import LEGACY_VERSIONS, load_legacy
from psro.members import network_of
from psro.payoffs import PayoffTable
from psro.saved_members import member_from_record, network_path, read_log
from psro.state import RunState

FORMAT_VERSION = 3
VIEWS = ("metrics.jsonl", "metrics.csv", "mixtures.jsonl", "oracle_log.jsonl")
"""Files appended after every iteration; each record holds their lengths."""


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
    writer that continues an existing one."""

    def __init__(self, path: str | Path, last: _Saved | None = None):
        self.path = Path(path)
        self.last = last

    @classmethod
    def create(cls, path: str | Path, config: RunConfig, manifest: dict) -> RunWriter:
        """Start a run directory: ``config.json`` and ``run.json``. ``manifest`` holds the
        evaluation name and, for exact runs, the information-state keys."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path / "config.json", config.to_json())
        atomic_write_text(path / "run.json",
                          json.dumps({"format_version": FORMAT_VERSION, **manifest}))
        return cls(path)

    def save(self, state: RunState) -> None:
        """Write what is new in ``state`` since the last save: the record of its iteration
        (rewritten when the iteration was saved already, e.g. after the final measurement
        updated its row), its networks and log rows."""
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
               sizes: tuple[int, ...] | None = None, log_rows: int | None = None) -> None:
        """Write record ``k`` (members ``sizes_before`` to ``sizes``, log rows
        ``log_rows_before`` to ``log_rows``; by default everything up to now)."""
        sizes = state.sizes if sizes is None else tuple(sizes)
        log_rows = len(state.oracle_log) if log_rows is None else log_rows
        members, arrays = [], {}
        for p, pop in enumerate(state.populations):
            joined = []
            for index in range(sizes_before[p], sizes[p]):
                member = pop[index]
                network = network_of(member)
                if network is not None:
                    network.save(network_path(self.path, p, index))
                if member.kind == "tabular":
                    arrays[f"table_{p}_{index}"] = member.probs
                joined.append({"name": member.name, "kind": member.kind,
                               "network": network is not None, **member.metadata})
            members.append(joined)
        for b, block in enumerate(PayoffTable.new_blocks(sizes_before, sizes)):
            values, counts, errors = state.table.block(block)
            arrays[f"block{b}_values"] = values
            arrays[f"block{b}_counts"] = counts
            arrays[f"block{b}_std_errs"] = errors
        row = state.metrics[k]
        data = {"metrics.jsonl": jsonl([row]), "metrics.csv": csv_rows([row], header=k == 0),
                "mixtures.jsonl": jsonl([state.mixture_history[k]]),
                "oracle_log.jsonl": jsonl(state.oracle_log[log_rows_before:log_rows])}
        views_after = {name: append_bytes(self.path / name, data[name], views_before[name])
                       for name in VIEWS}
        meta = {"format_version": FORMAT_VERSION, "iteration": k, "sizes": list(sizes),
                "sizes_before": list(sizes_before), "members": members, "metrics": row,
                "mixtures": state.mixture_history[k],
                "wall_time_s": state.wall_time_s if k == state.iteration else row["wall_time_s"],
                "env_steps": state.metrics[k].get("env_steps", state.env_steps),
                "oracle_log_rows": log_rows,
                "oracle_log_rows_before": log_rows_before, "views_before": views_before,
                "views": views_after}
        meta["checksum"] = checksum(meta, arrays)
        payload = {"meta": np.array(json.dumps(meta)), **arrays}
        atomic_write_bytes(_record_path(self.path, k), lambda h: np.savez(h, **payload))
        self.last = _Saved(k, tuple(sizes_before), sizes, views_before, views_after,
                           log_rows_before, log_rows)

    def convert(self, state: RunState, manifest: dict) -> None:
        """Rewrite a run of format 1 or 2 as records (one per iteration, members and table
        blocks split by the population sizes of each iteration), then remove its old files."""
        sizes_before = (0,) * state.num_players
        views = dict.fromkeys(VIEWS, 0)
        log_rows = 0
        for k in range(state.iteration + 1):
            sizes = tuple(len(m) for m in state.mixture_history[k]["mixtures"])
            rows = sum(1 for r in state.oracle_log if r.get("iteration", 0) <= k)
            self._write(state, k, sizes_before, views, log_rows, sizes, rows)
            sizes_before, views, log_rows = sizes, self.last.views_after, rows
        atomic_write_text(self.path / "run.json",
                          json.dumps({"format_version": FORMAT_VERSION, **manifest}))
        for name in ("checkpoint.npz", "payoffs.npz", "population.npz", "population.json",
                     "ppo_log.jsonl"):
            (self.path / name).unlink(missing_ok=True)


# -- reading --------------------------------------------------------------------------------
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
        version = manifest.pop("format_version")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError, KeyError) as err:
        raise RunDirectoryError(f"{manifest_file} is corrupt: {err!r}") from None
    if version != FORMAT_VERSION:
        raise RunDirectoryError(f"{path} has format version {version!r}; this toolkit reads "
                                f"{', '.join(map(str, (*LEGACY_VERSIONS, FORMAT_VERSION)))}")
    records = _read_records(path)
    try:
        state = _state_from_records(path, config, manifest, records, networks)
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
    state.iteration = int(last["iteration"])
    state.wall_time_s = float(last["wall_time_s"])
    state.env_steps = int(last["env_steps"])
    state.oracle_log = read_log(path / "oracle_log.jsonl", int(last["oracle_log_rows"]))
    return state
