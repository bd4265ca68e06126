"""A suite's folder (``psro bench SUITE --out DIR``): which suite it holds (its ``suite.json``)
and whether a call of a suite may write into it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from psro.errors import ConfigError
from psro.storage.text_files import read_json


def _described(out: str | Path) -> dict:
    """The folder ``out``'s ``suite.json`` (empty where it cannot be read)."""
    try:
        described = read_json(Path(out) / "suite.json")
    except ValueError:
        return {}
    return described if isinstance(described, dict) else {}


def held_suite(out: str | Path) -> str | None:
    """The name of the suite whose runs the folder ``out`` holds (its ``suite.json``), None
    where it holds none that can be read."""
    return _name(_described(out))


def _name(described: dict) -> str | None:
    name = described.get("name")
    return name if isinstance(name, str) else None


def _seeds(described: dict) -> list[int]:
    seeds = described.get("seeds")
    return [s for s in seeds if isinstance(s, int)] if isinstance(seeds, list) else []


def seed_ranges(seeds: list[int]) -> str:
    """Seeds in words, runs of consecutive ones as ranges: ``[1, 2, 3, 7]`` as ``1-3, 7``."""
    parts: list[list[int]] = []
    for seed in sorted(set(seeds)):
        if parts and seed == parts[-1][1] + 1:
            parts[-1][1] = seed
        else:
            parts.append([seed, seed])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in parts)


def check_suite_folder(out: str | Path, name: str, seeds: Sequence[int] = ()) -> None:
    """Refuse, before anything is written (:class:`ConfigError`), an ``out`` that cannot be
    the folder of the suite ``name`` run with ``seeds``: a file; a folder of another suite (its
    ``suite.json`` would be replaced and its runs dropped from its report); a folder that holds
    other things and no readable ``suite.json`` (a run directory, say: the suite's runs would
    be mixed into it); a folder of this suite whose earlier calls listed seeds that ``seeds``
    leaves out (its ``suite.json`` would drop them, and its report and head-to-head results
    would be over fewer seeds than its tables count). A new or empty folder, or one of an
    earlier call of this suite with the same or more seeds, is accepted."""
    out = Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"{out} is not a folder; --out is the suite's folder")
    described = _described(out)
    held = _name(described)
    if held is None and (entries := sorted((e.name for e in out.iterdir()),
                                           key=lambda name: (name.startswith("."), name))):
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise ConfigError(f"{out} is not a suite's folder: it holds {shown} and no readable "
                          f"suite.json; give a new or empty folder, or the folder of an "
                          f"earlier call of this suite")
    if held not in (None, name):
        raise ConfigError(f"{out} holds the runs of suite {held!r}; use another --out")
    left_out = sorted(set(_seeds(described)) - set(seeds)) if held is not None and seeds else []
    if left_out:
        raise ConfigError(f"{out} holds seeds {seed_ranges(_seeds(described))} of suite {name!r}, "
                          f"and this call runs seeds {seed_ranges(list(seeds))}: the folder's "
                          f"report and head-to-head results would leave seeds "
                          f"{seed_ranges(left_out)} out; run it with every seed the folder "
                          f"holds (--seeds N runs 0 to N-1; finished runs are skipped), or "
                          f"use another --out")
