"""Readers of run directories written in formats 1 and 2 (one ``checkpoint.npz`` rewritten
after every iteration). Only :mod:`psro.storage.checkpoint` calls them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from psro.config import RunConfig, saved_config
from psro.errors import ConfigError, RunDirectoryError
from psro.payoffs import PayoffTable
from psro.state import RunState
from psro.storage.checkpoint.members import member_from_record, read_log
from psro.storage.text_files import read_json

LEGACY_VERSIONS = (1, 2)


def load_legacy(path: Path, config: RunConfig, networks: bool) -> tuple[RunState, dict, int]:
    """(state, manifest, format version) of a format 1 or 2 run directory."""
    file = path / "checkpoint.npz"
    if not file.is_file():
        raise RunDirectoryError(f"{path} holds no saved iteration yet")
    try:
        with np.load(file, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("meta")))
    except Exception as err:  # zipfile, OSError, ValueError, KeyError, JSON errors
        raise RunDirectoryError(f"checkpoint {file} is corrupt and was left untouched: "
                                f"{type(err).__name__}: {err}") from None
    version = meta.get("format_version") if isinstance(meta, dict) else None
    if version not in LEGACY_VERSIONS:
        raise RunDirectoryError(f"checkpoint {file} has format version {version!r}; this "
                                f"toolkit reads versions 1, 2 and 3")
    try:
        saved = saved_config(meta.get("config") or {})
        if saved.to_dict() != config.to_dict():
            raise RunDirectoryError(f"{path}: checkpoint and config.json disagree")
    except (ConfigError, TypeError):
        raise RunDirectoryError(f"{path}: checkpoint and config.json disagree") from None
    evaluation = "exact" if meta.get("infoset_digest") is not None else "sampled"
    try:
        state = RunState.empty(len(meta["members"]), evaluation)
        for p, members in enumerate(meta["members"]):
            for k, info in enumerate(members):
                info = {"kind": "tabular", **info, "network": bool(meta["networks"][p][k])}
                table = arrays.get(f"population_player_{p}")
                state.populations[p].append(member_from_record(path, p, k, info,
                                                    None if table is None else table[k],
                                                    networks))
        state.table = PayoffTable.from_arrays(arrays["payoff_values"], arrays["payoff_counts"],
                                              arrays["payoff_std_errs"], evaluation == "exact")
        state.iteration = int(meta["iteration"])
        state.wall_time_s = float(meta["wall_time_s"])
        state.metrics = list(meta["metrics"])
        state.mixture_history = list(meta["mixtures"])
        state.mixtures = [np.asarray(m, float) for m in state.mixture_history[-1]["mixtures"]]
        state.env_steps = int(state.metrics[-1].get("env_steps", 0))
        state.oracle_log = list(meta["ppo_log"]) if "ppo_log" in meta else \
            read_log(path / "ppo_log.jsonl", int(meta["ppo_log_rows"]))
    except RunDirectoryError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError) as err:
        raise RunDirectoryError(f"checkpoint in {path} is incomplete: {err!r}") from None
    check_rows(state, path)
    if state.table.shape != state.sizes:
        raise RunDirectoryError(f"checkpoint in {path}: payoff table shape does not match the "
                                f"population")
    keys = meta.get("infoset_keys")
    if keys is None and (path / "population.json").is_file():
        try:
            keys = read_json(path / "population.json").get("infoset_keys")
        except (ValueError, AttributeError):
            keys = None
    manifest = {"evaluation": evaluation, "infoset_digest": meta.get("infoset_digest"),
                "infoset_keys": keys}
    return state, manifest, int(version)


def check_rows(state: RunState, path: Path) -> None:
    """Every metrics row is a table with its iteration number, every mixtures row a table with
    one list of weights per player; :class:`RunDirectoryError` otherwise."""
    for k, (row, mix) in enumerate(zip(state.metrics, state.mixture_history, strict=False)):
        if not isinstance(row, dict) or row.get("iteration") != k:
            raise RunDirectoryError(f"{path}: metrics row {k} is not the row of iteration {k}")
        if not isinstance(mix, dict) or not isinstance(mix.get("mixtures"), list) \
                or len(mix["mixtures"]) != state.num_players:
            raise RunDirectoryError(f"{path}: mixtures row {k} does not hold one mixture per "
                                    f"player")
    if len(state.metrics) != state.iteration + 1 or \
            len(state.mixture_history) != state.iteration + 1:
        raise RunDirectoryError(f"{path}: {len(state.metrics)} metrics and "
                                f"{len(state.mixture_history)} mixtures rows for "
                                f"{state.iteration + 1} iterations")
