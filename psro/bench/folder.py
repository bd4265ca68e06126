"""A suite's folder (``psro bench SUITE --out DIR``): which suite it holds (its ``suite.json``)
and whether a call of a suite may write into it."""

from __future__ import annotations

import re
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


def _dropped(held: list, games: list) -> str | None:
    """What of the runs described by ``held`` (a folder's ``suite.json`` games) the suite
    ``games`` would drop or describe otherwise, in words; None where it keeps them all (it may
    add games and methods)."""
    new = {g.get("label"): g for g in games if isinstance(g, dict)}
    for game in (g for g in held if isinstance(g, dict)):
        label = game.get("label")
        other = new.get(label)
        if other is None:
            return f"it has no game {label!r}"
        for key, value in game.items():
            if key != "methods" and other.get(key) != value:
                return f"its game {label!r} has {key} {other.get(key)!r}, not {value!r}"
        methods = {m.get("label"): m for m in other.get("methods", ())}
        for method in game.get("methods") or ():
            mine = methods.get(method.get("label"))
            if mine is None:
                return f"its game {label!r} has no method {method.get('label')!r}"
            if mine.get("settings") != method.get("settings"):
                return (f"its method {method.get('label')!r} of {label!r} has other settings "
                        f"({mine.get('settings')} against {method.get('settings')})")
    return None


def check_suite_folder(out: str | Path, name: str, seeds: Sequence[int] = (),
                       games: list | None = None) -> None:
    """Refuse, before anything is written (:class:`ConfigError`), an ``out`` that cannot be
    the folder of the suite ``name`` run with ``seeds``: a file; a folder of another suite (its
    ``suite.json`` would be replaced and its runs dropped from its report); a folder that holds
    other things and no readable ``suite.json`` (a run directory, say: the suite's runs would
    be mixed into it); a folder of this suite whose earlier calls listed seeds that ``seeds``
    leaves out (its ``suite.json`` would drop them, and its report and head-to-head results
    would be over fewer seeds than its tables count). A new or empty folder, or one of an
    earlier call of this suite with the same or more seeds, is accepted. Suites are told apart
    by their runs as well as by name: with ``games`` (the new suite's description of its
    games), a folder whose suite of the same name has a game or method that ``games`` lacks or
    describes otherwise (a suite file of the same name with other contents) is refused too; a
    suite that adds games or methods to it is accepted."""
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
    dropped = None if held is None or games is None else \
        _dropped(described.get("games") or [], games)
    if dropped:
        raise ConfigError(f"{out} holds the runs of another suite named {name!r}: this one "
                          f"would drop or change them ({dropped}); use another --out")
    left_out = sorted(set(_seeds(described)) - set(seeds)) if held is not None and seeds else []
    if left_out:
        raise ConfigError(f"{out} holds seeds {seed_ranges(_seeds(described))} of suite {name!r}, "
                          f"and this call runs seeds {seed_ranges(list(seeds))}: the folder's "
                          f"report and head-to-head results would leave seeds "
                          f"{seed_ranges(left_out)} out; run it with every seed the folder "
                          f"holds (--seeds N runs 0 to N-1; finished runs are skipped), or "
                          f"use another --out")


SUITE_FILES = ("suite.json", "report")
"""What a suite's folder holds beside its games' folders."""
GAME_FILES = ("reference.json", "head_to_head.json")
"""What a game's folder holds beside its methods' folders."""
MAX_FOLDER_NAME = 100
"""Longest folder name of a game or method label (a run's files add ``seed-N.done.json``, and
file systems allow 255 bytes)."""


def check_folder_names(where: str, kind: str, labels: list[str], taken: tuple[str, ...]) -> None:
    """Refuse, before any folder is made, labels whose folder names (:func:`slug`) collide
    (``psro nash`` and ``psro, nash``; labels of other scripts all become ``x``), are longer than
    :data:`MAX_FOLDER_NAME` or are names the folder already uses for its own files
    (``taken``) or that a file system reserves (``.``, ``..``)."""
    folders: dict[str, str] = {}
    for label in labels:
        folder = slug(label)
        if folder in folders:
            raise ConfigError(f"{where}: the {kind} labels {folders[folder]!r} and {label!r} "
                              f"would share the folder {folder!r} (a label's folder keeps its "
                              f"letters A-Z, digits, '_' and '.'); give them labels that differ "
                              f"there")
        if len(folder) > MAX_FOLDER_NAME:
            raise ConfigError(f"{where}: the {kind} label {label[:40]!r}... makes a folder name "
                              f"of {len(folder)} characters; at most {MAX_FOLDER_NAME}")
        if folder in (*taken, ".", "..") or set(folder) == {"."}:
            raise ConfigError(f"{where}: the {kind} label {label!r} would be the folder "
                              f"{folder!r}, a name the suite's folders keep for "
                              f"{'their own files' if folder in taken else 'the file system'}; "
                              f"choose another label")
        folders[folder] = label


def slug(text: str) -> str:
    """A folder name for a game or method label: ``Liar's dice 2x5`` -> ``liar-s-dice-2x5``."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-").lower() or "x"
