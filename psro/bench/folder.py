"""A suite's folder (``psro bench SUITE --out DIR``): which suite it holds (its ``suite.json``)
and whether a call of a suite may write into it."""

from __future__ import annotations

from pathlib import Path

from psro.errors import ConfigError
from psro.storage.text_files import read_json


def held_suite(out: str | Path) -> str | None:
    """The name of the suite whose runs the folder ``out`` holds (its ``suite.json``), None
    where it holds none that can be read."""
    try:
        name = read_json(Path(out) / "suite.json").get("name")
    except (ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def check_suite_folder(out: str | Path, name: str) -> None:
    """Refuse, before anything is written (:class:`ConfigError`), an ``out`` that cannot be
    the folder of the suite ``name``: a file; a folder of another suite (its ``suite.json``
    would be replaced and its runs dropped from its report); a folder that holds other things
    and no readable ``suite.json`` (a run directory, say: the suite's runs would be mixed into
    it). A new or empty folder, or one of an earlier call of this suite, is accepted."""
    out = Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"{out} is not a folder; --out is the suite's folder")
    held = held_suite(out)
    if held is None and (entries := sorted((e.name for e in out.iterdir()),
                                           key=lambda name: (name.startswith("."), name))):
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise ConfigError(f"{out} is not a suite's folder: it holds {shown} and no readable "
                          f"suite.json; give a new or empty folder, or the folder of an "
                          f"earlier call of this suite")
    if held not in (None, name):
        raise ConfigError(f"{out} holds the runs of suite {held!r}; use another --out")
