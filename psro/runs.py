"""Run directories: config, metrics (CSV and JSONL), mixtures, payoff table, population and an
atomic checkpoint; ``load_run`` reads one back.

Files (format version ``FORMAT_VERSION``; nothing is pickled):

- ``config.json``: the :class:`RunConfig`;
- ``metrics.csv``, ``metrics.jsonl``: one row per iteration;
- ``mixtures.jsonl``: the meta-strategy of every iteration;
- ``payoffs.npz``: ``values`` (num_players, K_0, ..., K_{N-1}), ``counts``, ``exact``;
- ``population.npz`` + ``population.json``: every member's action-probability table and
  metadata, with each player's information-set keys so a table can be checked against the game;
- ``ppo_log.jsonl`` (PPO runs): one row of diagnostics per PPO update, appended as the run
  goes;
- ``checkpoint.npz`` (format ``CHECKPOINT_VERSION``): all of the above except the PPO log, of
  which it records the number of valid rows, plus the run's state; written to a temporary file
  and renamed, so a killed run leaves the previous checkpoint intact. Version 1 checkpoints
  (which held the PPO log itself) are still read.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

FORMAT_VERSION = 1
CHECKPOINT_VERSION = 2
READABLE_CHECKPOINTS = (1, 2)


def _jsonl(rows: list[dict]) -> str:
    """One JSON object per line."""
    return "".join(json.dumps(r) + "\n" for r in rows)


class RunDirectoryError(ValueError):
    """A directory that is not a run, or whose checkpoint is corrupt or incompatible."""


def atomic_write_bytes(path: Path, write) -> None:
    """Write through ``write(file)`` to a temporary file beside ``path``, then rename."""
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
    atomic_write_bytes(path, lambda h: h.write(text.encode()))


class RunDirectory:
    """Reads and writes the files of one run directory."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    # -- writing ----------------------------------------------------------------------------
    def write_config(self, config_json: str) -> None:
        atomic_write_text(self.path / "config.json", config_json)

    def write_metrics(self, rows: list[dict], mixtures: list[dict]) -> None:
        """Rewrite the metrics and mixtures files from the full history (atomic)."""
        if rows:
            fields = list(rows[0])
            lines = [",".join(fields)]
            for row in rows:
                lines.append(",".join(_csv_cell(row.get(k)) for k in fields))
            atomic_write_text(self.path / "metrics.csv", "\n".join(lines) + "\n")
        atomic_write_text(self.path / "metrics.jsonl", _jsonl(rows))
        atomic_write_text(self.path / "mixtures.jsonl", _jsonl(mixtures))

    def append_ppo_log(self, rows: list[dict]) -> None:
        """Append PPO diagnostics rows to ``ppo_log.jsonl`` (one JSON object per line)."""
        with open(self.path / "ppo_log.jsonl", "a") as handle:
            handle.write(_jsonl(rows))

    def write_ppo_log(self, rows: list[dict]) -> None:
        """Rewrite ``ppo_log.jsonl`` with exactly ``rows`` (atomic)."""
        if rows or (self.path / "ppo_log.jsonl").exists():
            atomic_write_text(self.path / "ppo_log.jsonl", _jsonl(rows))

    def read_ppo_log(self, rows: int) -> list[dict]:
        """The first ``rows`` rows of ``ppo_log.jsonl`` (those the checkpoint vouches for;
        rows appended after it, or a line cut short by a kill, are ignored)."""
        if rows == 0:
            return []
        try:
            with open(self.path / "ppo_log.jsonl") as handle:
                lines = [line for _, line in zip(range(rows), handle, strict=False)]
            log = [json.loads(line) for line in lines]
        except (OSError, json.JSONDecodeError) as err:
            raise RunDirectoryError(f"{self.path / 'ppo_log.jsonl'} is unreadable: {err}") \
                from None
        if len(log) < rows:
            raise RunDirectoryError(f"{self.path / 'ppo_log.jsonl'} holds {len(log)} rows; "
                                    f"the checkpoint expects {rows}")
        return log

    def write_tables(self, payoffs, population_arrays: dict[str, np.ndarray],
                     population_meta: dict) -> None:
        atomic_write_bytes(self.path / "payoffs.npz", lambda h: np.savez(
            h, values=payoffs.values, counts=payoffs.counts, std_errs=payoffs.std_errs,
            exact=np.array(payoffs.exact),
            format_version=np.array(FORMAT_VERSION)))
        atomic_write_bytes(self.path / "population.npz",
                           lambda h: np.savez_compressed(h, **population_arrays))
        atomic_write_text(self.path / "population.json", json.dumps(population_meta))

    def write_checkpoint(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        meta = {"format_version": CHECKPOINT_VERSION, **meta}
        payload = {"meta": np.array(json.dumps(meta)), **arrays}
        atomic_write_bytes(self.path / "checkpoint.npz",
                           lambda h: np.savez_compressed(h, **payload))

    # -- reading ----------------------------------------------------------------------------
    def is_run(self) -> bool:
        return (self.path / "config.json").is_file()

    def read_config(self) -> dict:
        if not self.path.is_dir():
            raise RunDirectoryError(f"{self.path} is not a directory")
        if not self.is_run():
            raise RunDirectoryError(f"{self.path} is not a run directory (no config.json)")
        try:
            return json.loads((self.path / "config.json").read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise RunDirectoryError(f"{self.path / 'config.json'} is corrupt: {err}") from None

    def read_checkpoint(self) -> tuple[dict, dict[str, np.ndarray]]:
        path = self.path / "checkpoint.npz"
        if not path.is_file():
            raise RunDirectoryError(f"{self.path} has no checkpoint.npz to resume from")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
            meta = json.loads(str(arrays.pop("meta")))
        except Exception as err:  # zipfile, OSError, ValueError, KeyError, JSON errors
            raise RunDirectoryError(f"checkpoint {path} is corrupt and was left untouched: "
                                    f"{type(err).__name__}: {err}") from None
        version = meta.get("format_version")
        if version not in READABLE_CHECKPOINTS:
            raise RunDirectoryError(f"checkpoint {path} has format version {version!r}; this "
                                    f"toolkit reads versions "
                                    f"{', '.join(map(str, READABLE_CHECKPOINTS))}")
        return meta, arrays

    def read_metrics(self) -> list[dict]:
        path = self.path / "metrics.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _csv_cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)
