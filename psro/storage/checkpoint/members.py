"""Members and logs rebuilt from saved run files (records of any format version)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from psro.errors import RunDirectoryError
from psro.extensive_form.members import UniformMember
from psro.extensive_form.policies import TabularPolicy
from psro.storage.files import file_digest
from psro.storage.text_files import parse_json


def network_path(directory: Path, player: int, index: int) -> Path:
    """Where member ``index`` of ``player`` keeps its network (``.pt`` + ``.json``)."""
    return Path(directory) / "networks" / f"player{player}_member{index}"


def network_files(path: Path) -> tuple[Path, Path]:
    """The two files of the network at ``path`` (weights, metadata), in digest order."""
    return path.with_suffix(".pt"), path.with_suffix(".json")



def table_arrays_of(probs: np.ndarray, player: int, index: int) -> dict[str, np.ndarray]:
    """The record arrays of a tabular member's table, in the smallest of three forms, each
    giving back the same values (:func:`table_from_arrays`):

    - a pure strategy (every row one-hot, as an exact best response is): each information
      set's action (``pure_P_I``, int16, and its width ``pure_P_I_width``), about a hundredth
      of the dense table;
    - a table whose nonzero entries take less than half the dense table's bytes (``xdo``'s
      restricted equilibria, which mostly play one action: on liar's dice 13,000 entries of
      160,000): their flat indices (``sparse_P_I_index``, int64), values
      (``sparse_P_I_value``, float64) and the table's shape (``sparse_P_I_shape``);
    - any other, the dense float64 table (``table_P_I``)."""
    probs = np.asarray(probs)
    chosen = probs.argmax(axis=1) if probs.size else np.zeros(0, dtype=np.int64)
    if probs.ndim == 2 and probs.shape[1] < 2**15 and probs.shape[0] > 0 and \
            np.all((probs == 0.0) | (probs == 1.0)) and np.all(probs.sum(axis=1) == 1.0):
        return {f"pure_{player}_{index}": chosen.astype(np.int16),
                f"pure_{player}_{index}_width": np.array(probs.shape[1], dtype=np.int64)}
    flat = np.flatnonzero(probs)
    if probs.ndim == 2 and 16 * len(flat) < 4 * probs.size:
        return {f"sparse_{player}_{index}_index": flat.astype(np.int64),
                f"sparse_{player}_{index}_value": probs.reshape(-1)[flat].astype(np.float64),
                f"sparse_{player}_{index}_shape": np.array(probs.shape, dtype=np.int64)}
    return {f"table_{player}_{index}": probs}


def table_from_arrays(arrays: dict, player: int, index: int) -> np.ndarray | None:
    """A tabular member's table from its record's arrays (:func:`table_arrays_of`), None where
    the record holds none."""
    if f"table_{player}_{index}" in arrays:
        return arrays[f"table_{player}_{index}"]
    if f"sparse_{player}_{index}_index" in arrays:
        shape = tuple(int(n) for n in arrays[f"sparse_{player}_{index}_shape"])
        table = np.zeros(shape)
        table.reshape(-1)[arrays[f"sparse_{player}_{index}_index"]] = \
            arrays[f"sparse_{player}_{index}_value"]
        return table
    chosen = arrays.get(f"pure_{player}_{index}")
    if chosen is None:
        return None
    table = np.zeros((len(chosen), int(arrays[f"pure_{player}_{index}_width"])))
    table[np.arange(len(chosen)), chosen.astype(np.int64)] = 1.0
    return table


def member_from_record(path: Path, player: int, index: int, info: dict, table, networks: bool):
    """Rebuild one member from its record entry (and its network file)."""
    name, kind, has_network = info.pop("name"), info.pop("kind"), info.pop("network", False)
    digest = info.pop("network_sha256", None)  # format 3 records vouch for their networks
    network = None
    if has_network and networks:
        from psro.rl.networks import NeuralPolicy

        where = network_path(path, player, index)
        if digest is not None:
            check_network_files(where, digest)
        network = NeuralPolicy.load(where)
    if kind == "tabular":
        check_table(table, player, index)
        return TabularPolicy(player, table, name=name, metadata=info, network=network)
    if kind == "neural":
        if network is None:
            return UnloadedMember(player, name, info)
        network.name, network.metadata = name, info
        return network
    if kind == "uniform":
        return UniformMember(player)
    raise ValueError(f"member {index} of player {player} has unknown kind {kind!r}")


def check_network_files(where: Path, digest: str) -> None:
    """Refuse a network whose files are missing or are not the ones its record vouches for
    (replaced, edited or left by another run)."""
    missing = [str(f) for f in network_files(where) if not f.is_file()]
    if missing:
        raise RunDirectoryError(f"network file {missing[0]} is missing")
    if file_digest(*network_files(where)) != digest:
        raise RunDirectoryError(f"network files {where}.pt/.json are not the ones the run "
                                f"wrote (their SHA-256 does not match the iteration record)")


def check_table(table, player: int, index: int) -> None:
    """A member's action-probability table: a 2-D array of probabilities in [0, 1] whose rows
    sum to 1 (one row per information set)."""
    if table is None or table.ndim != 2:
        raise ValueError(f"member {index} of player {player} has no valid table")
    if not np.all(np.isfinite(table)) or table.min() < 0 or table.max() > 1 \
            or not np.allclose(table.sum(axis=1), 1.0, atol=1e-6):
        raise ValueError(f"the table of member {index} of player {player} is not a policy "
                         f"(probabilities in [0, 1] summing to 1 per information set)")


class UnloadedMember:
    """A neural member read without its network (``load(..., networks=False)``)."""

    kind = "neural"

    def __init__(self, player: int, name: str, metadata: dict):
        self.player, self.name, self.metadata = player, name, metadata


def read_log(file: Path, rows: int) -> list[dict]:
    """The first ``rows`` rows of a JSON-lines log that the records vouch for. Rows appended
    after the last record, a line cut short by a kill, or a log truncated or deleted since
    (diagnostics only) give the rows that can be read."""
    if rows == 0 or not file.is_file() or file.is_symlink():
        return []
    log = []
    try:
        with open(file) as handle:
            for _, line in zip(range(rows), handle, strict=False):
                log.append(parse_json(line))
    except (OSError, ValueError):  # ValueError: parse_json's, or a line that is not UTF-8
        pass
    return log
