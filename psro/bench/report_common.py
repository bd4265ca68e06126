"""What the parts of a suite's report share: reading its measurement files and its finished
runs, and each method's line style."""

from __future__ import annotations

from pathlib import Path

from psro.bench.folder import slug
from psro.reports import RunRecord
from psro.reports.groups import RunGroup
from psro.storage.text_files import read_json

REFERENCE_STYLES = {"CFR+ (OpenSpiel)": {"color": "black", "linestyle": "--"},
                    "PCFR+ (tabular)": {"color": "black", "linestyle": "-."},
                    "DCFR (tabular)": {"color": "0.3", "linestyle": ":"},
                    "DCFR+ (tabular)": {"color": "0.3", "linestyle": "--"},
                    "linear CFR (tabular)": {"color": "0.45", "linestyle": "-."},
                    "sequence-form LP": {"color": "black", "marker": "*", "linestyle": ""},
                    "uniform policy": {"color": "0.55", "linestyle": ":", "marker": ""}}
"""Reference lines look the same in every panel; each method has one colour in every panel."""


def style(label: str, labels: list[str]) -> dict:
    """A method's line style: its own colour, the same in every panel and figure, and no two
    methods of the suite alike (tab10 without its grey, tab20, then evenly spaced hues)."""
    if label in REFERENCE_STYLES:
        return REFERENCE_STYLES[label]
    if label not in labels:
        return {}
    from matplotlib import colormaps

    n, k = len(labels), labels.index(label)
    tab10 = [i for i in range(10) if i != 7]  # 7 is grey, the uniform policy's
    colour = colormaps["tab10"](tab10[k]) if n <= 9 else \
        colormaps["tab20"](k) if n <= 20 else colormaps["hsv"](k / n)
    return {"color": colour}


def finished_groups(out: Path, game: dict) -> list[RunGroup]:
    """Each method's finished runs (those with a ``seed-N.done.json``: a killed run or one
    still running would mix a partial curve into the finished ones)."""
    found = []
    for method in game["methods"]:
        folder = out / slug(game["label"]) / slug(method["label"])
        paths = sorted(p for p in folder.glob("seed-*") if (p / "config.json").exists()
                       and p.with_name(f"{p.name}.done.json").exists())
        if paths:
            found.append(RunGroup({}, [RunRecord(p) for p in paths], method["label"]))
    return found


def read_measurement(path: Path) -> dict | None:
    """A measurement file of the suite, or None where it is missing or damaged (the report
    then leaves out what it held; running the suite again measures it anew)."""
    try:
        data = read_json(path)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
