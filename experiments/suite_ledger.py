"""A large-tier suite's measurements gathered across folders: a ledger of every run's exact (or
lower-bound) exploitability and every seed's head-to-head scores, read from suite folders
(``psro bench SUITE --out DIR``) and kept as one JSON file, so that a suite too long for one
machine's session (the 10M tier: about 20 hours on 2 cores) is run a few seeds at a time into
separate folders and its tables are read from the ledger.

    python experiments/suite_ledger.py merge DIR [DIR ...] --ledger FILE
    python experiments/suite_ledger.py table --ledger FILE

``merge`` adds each folder's finished and measured runs (``seed-N.done.json`` and a
``seed-N.bound.json`` measured at the run's last iteration) and its head-to-head records per
seed (``head_to_head.json``). A run or a seed's pair the ledger holds already must have the
same values (to 1e-9): the same configuration and seed give the same run, so a difference
means the runs are not comparable, and the merge stops (exit 2) naming it. One exception: a
pair's record played exactly (``psro bench ... --exact-head-to-head``) replaces the Monte
Carlo record of the same runs, and a Monte Carlo record merged after it leaves it as it is.
``table`` prints, per game, each method's mean exploitability with its 95% Student-t interval
over seeds and the values seed by seed, and each pair's head-to-head score over the seeds both
methods ran (the suite report's formula, :func:`psro.bench.evaluation.pair_summary`) and how
it was played (exact, Monte Carlo, or mixed across seeds).

A seed's runs and head-to-head do not depend on the other seeds' (each is seeded by its own
seed and the methods' places in the suite), so seeds run into separate folders give the numbers
of one folder: run the remaining seeds with a copy of the suite file whose ``seeds`` lists
them, into a new folder, and merge it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from psro.bench.evaluation import pair_summary  # noqa: E402
from psro.bench.folder import slug  # noqa: E402
from psro.reports.groups import interval  # noqa: E402
from psro.storage import checkpoint  # noqa: E402
from psro.storage.files import atomic_write_text  # noqa: E402
from psro.storage.text_files import read_json  # noqa: E402

RUN_KEYS = ("exploitability", "nash_conv", "exploitability_kind", "gain_p0", "gain_p1",
            "value_p0", "value_p1")
"""What the ledger keeps of a run's measurement (``seed-N.bound.json``)."""
PAIR_KEYS = ("score", "first", "first_std_err", "second", "second_std_err", "iterations",
             "kind")
"""What the ledger keeps of a seed's head-to-head record."""
TOLERANCE = 1e-9
"""How far a value merged again may be from the ledger's."""


class LedgerError(ValueError):
    """A folder or ledger that cannot be merged: its message names the run and the values."""


def folder_entries(out: Path) -> tuple[str, dict, list[dict], list[dict]]:
    """The suite name of the folder ``out``, its large-tier games' method labels in the
    suite's order, its finished and measured runs and its head-to-head records per seed."""
    described = read_json(out / "suite.json")
    runs, pairs, methods = [], [], {}
    for game in described.get("games", ()):
        if game.get("tier") != "large":
            continue
        methods[game["label"]] = [m["label"] for m in game.get("methods", ())]
        folder = out / slug(game["label"])
        for method in game.get("methods", ()):
            for seed in described.get("seeds", ()):
                run = _measured_run(folder / slug(method["label"]) / f"seed-{seed}")
                if run is not None:
                    runs.append({"game": game["label"], "method": method["label"],
                                 "seed": seed, **run})
        h2h = folder / "head_to_head.json"
        for pair in (read_json(h2h).get("pairs", ()) if h2h.exists() else ()):
            for row in pair.get("per_seed", ()):
                if "iterations" in row:
                    pairs.append({"game": game["label"], "a": pair["a"], "b": pair["b"],
                                  "seed": row["seed"], **{k: row.get(k, "monte carlo")
                                                          if k == "kind" else row[k]
                                                          for k in PAIR_KEYS}})
    return described["name"], methods, runs, pairs


def _measured_run(path: Path) -> dict | None:
    """A run's ledger entry where it ended and was measured at its last iteration."""
    done, bound = (path.with_name(f"{path.name}.{end}.json") for end in ("done", "bound"))
    if not (done.exists() and bound.exists() and (path / "config.json").exists()):
        return None
    outcome, measured = read_json(done), read_json(bound)
    last = checkpoint.load(path, networks=False).state.metrics[-1]
    if last["iteration"] != outcome.get("iteration") or \
            measured.get("key", {}).get("iteration") != last["iteration"]:
        return None
    return {"iteration": last["iteration"], "env_steps": last.get("env_steps"),
            "stop_reason": outcome.get("stop_reason"),
            **{k: measured.get(k) for k in RUN_KEYS}}


def merge(ledger: dict, name: str, methods: dict, runs: list[dict], pairs: list[dict],
          source: str) -> int:
    """Add ``runs`` and ``pairs`` of suite ``name`` (whose large-tier games have the method
    labels ``methods``, in order) to ``ledger`` (in place); returns how many entries were new.
    :class:`LedgerError` for another suite, a game whose methods are in another order (a
    pair's episodes are seeded by the methods' places; methods added at the end of either
    list keep the others' places, and the ledger takes the longer list) or a value that
    differs."""
    if ledger.setdefault("suite", name) != name:
        raise LedgerError(f"{source} holds suite {name!r}; the ledger is of {ledger['suite']!r}")
    for game, labels in methods.items():
        held = ledger.setdefault("methods", {}).setdefault(game, labels)
        shorter, longer = sorted((held, labels), key=len)
        if longer[:len(shorter)] != shorter:
            raise LedgerError(f"{source}: game {game!r} has the methods {labels}; the ledger's "
                              f"are {held} (a pair's games are seeded by the methods' places)")
        ledger["methods"][game] = list(longer)  # a method added at the end keeps the places
    added = 0
    for kind, entries, key_of in (("runs", runs, ("game", "method", "seed")),
                                  ("pairs", pairs, ("game", "a", "b", "seed"))):
        held = {tuple(e[k] for k in key_of): e for e in ledger.setdefault(kind, [])}
        for entry in entries:
            key = tuple(entry[k] for k in key_of)
            if key not in held:
                ledger[kind].append(entry)
                held[key] = entry
                added += 1
                continue
            if kind == "pairs" and _exact_over_sampled(held[key], entry):
                if entry.get("kind") == "exact":  # played exactly: replaces the estimate
                    ledger[kind][ledger[kind].index(held[key])] = entry
                    held[key] = entry
                    added += 1
                continue
            for field, value in entry.items():
                if not _same(held[key].get(field, "monte carlo" if field == "kind" else None),
                             value):
                    raise LedgerError(f"{source}: {' · '.join(map(str, key))} has {field} "
                                      f"{value!r}; the ledger holds {held[key].get(field)!r} "
                                      f"(the same run should give the same value)")
    for kind in ("runs", "pairs"):
        ledger[kind].sort(key=lambda e: json.dumps([e.get(k) for k in (
            "game", "method", "a", "b", "seed")]))
    return added


def _exact_over_sampled(held: dict, entry: dict) -> bool:
    """Whether one of two records of the same runs' pair (the same iterations) was played
    exactly and the other by Monte Carlo (records without a kind are Monte Carlo)."""
    kinds = {held.get("kind", "monte carlo"), entry.get("kind", "monte carlo")}
    return kinds == {"exact", "monte carlo"} and held["iterations"] == entry["iterations"]


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE)
    return a == b


def _mean_text(values: list[float]) -> str:
    curve = interval(np.zeros(1), np.asarray(values, dtype=float)[:, None])
    half = curve.high[0] - curve.mean[0]
    return f"{curve.mean[0]:.3f} +- {half:.3f}" if np.isfinite(half) else \
        f"{curve.mean[0]:.3f}"


def tables(ledger: dict) -> str:
    """The ledger's tables in Markdown: per game, each method's exploitability over seeds and
    each pair's head-to-head score over the seeds both ran."""
    lines = []
    order = ledger.get("methods", {})
    for game in order:
        runs = [r for r in ledger.get("runs", ()) if r["game"] == game]
        if not runs:
            continue
        kinds = {r["exploitability_kind"] for r in runs}
        lines += [f"### {game} ({', '.join(sorted(kinds))})", "",
                  "| method | seeds | exploitability (mean +- 95%) | per seed | env steps |",
                  "| --- | --- | --- | --- | --- |"]
        for method in (m for m in order[game] if any(r["method"] == m for r in runs)):
            mine = sorted((r for r in runs if r["method"] == method), key=lambda r: r["seed"])
            values = [r["exploitability"] for r in mine]
            per_seed = ", ".join(f"{r['seed']}: {r['exploitability']:.3f}" for r in mine)
            steps = np.mean([r["env_steps"] or 0 for r in mine])
            lines.append(f"| {method} | {len(mine)} | {_mean_text(values)} | {per_seed} | "
                         f"{steps:,.0f} |")
        pairs = [p for p in ledger.get("pairs", ()) if p["game"] == game]
        if pairs:
            lines += ["", "| A | B | A's score (mean +- 95%) | as player 0 | as player 1 | "
                      "played | per seed |", "| --- | --- | --- | --- | --- | --- | --- |"]
        for a, b in sorted(dict.fromkeys((p["a"], p["b"]) for p in pairs),
                           key=lambda ab: (order[game].index(ab[0]), order[game].index(ab[1]))):
            mine = sorted((p for p in pairs if (p["a"], p["b"]) == (a, b)),
                          key=lambda p: p["seed"])
            per_seed = ", ".join(f"{p['seed']}: {p['score']:+.3f}" for p in mine)
            pair = pair_summary(a, b, [p["seed"] for p in mine], mine)
            cells = " | ".join(f"{pair[f]:+.3f} +- {pair[w]:.3f}" for f, w in (
                ("score", "half_width"), ("first", "first_half_width"),
                ("second", "second_half_width")))
            lines.append(f"| {a} | {b} | {cells} | {pair['kind']} | {per_seed} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("merge", help="add suite folders' measured runs to the ledger")
    add.add_argument("folders", nargs="+", type=Path)
    add.add_argument("--ledger", type=Path, required=True)
    show = sub.add_parser("table", help="print the ledger's tables")
    show.add_argument("--ledger", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        ledger = read_json(args.ledger) if args.ledger.exists() else {}
        if args.command == "table":
            try:
                print(tables(ledger), flush=True)
            except BrokenPipeError:  # the reader is gone (`... table | head`): stop quietly
                sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the exit's own flush
                return 141
            return 0
        for folder in args.folders:
            if not (folder / "suite.json").exists():
                raise LedgerError(f"{folder} is not a suite's folder (no suite.json)")
            added = merge(ledger, *folder_entries(folder), source=str(folder))
            print(f"{folder}: {added} new entries")
    except (LedgerError, ValueError) as err:
        print(f"suite_ledger: {err}", file=sys.stderr)
        return 2
    args.ledger.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.ledger, json.dumps(ledger, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
