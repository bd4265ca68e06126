"""``experiments/suite_ledger.py``: a suite run a seed at a time into separate folders gives the
ledger the numbers of one folder; the tables are the suite report's; a value that differs stops
the merge."""

import csv
import importlib
import json
import sys

import pytest
from conftest import ROOT

from psro.bench import Method, Suite, SuiteGame, run_suite, write_suite_report

MC = {"min_episodes": 64, "max_episodes": 128, "tolerance": 0.5}
LARGE = {"oracle": "ppo", "max_nodes": 50, "monte_carlo": MC}  # Kuhn, as if too large to walk


def _suite(seeds: tuple[int, ...]) -> Suite:
    game = SuiteGame("kuhn_poker", "Kuhn sampled", "large", (
        Method("psro", {**LARGE, "meta_solver": "nash", "ppo": {"env_steps": 600}}),
        Method("self-play", {**LARGE, "meta_solver": "latest",
                             "ppo": {"env_steps": 600, "greedy": False}})),
        60, env_steps=1200, response_steps=1000, thresholds=())
    return Suite("ledger", (game,), seeds=seeds)


@pytest.fixture
def ledger_module(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "experiments"))
    yield importlib.import_module("suite_ledger")
    sys.modules.pop("suite_ledger", None)


@pytest.mark.slow
def test_seeds_run_apart_merge_to_the_numbers_of_one_folder(ledger_module, tmp_path, capsys):
    whole, part = tmp_path / "whole", tmp_path / "part"
    run_suite(_suite((0, 1)), whole, quiet=True)
    run_suite(_suite((1,)), part, quiet=True)  # seed 1 again, alone, in another folder
    ledger = tmp_path / "results" / "ledger.json"
    assert ledger_module.main(["merge", str(part), "--ledger", str(ledger)]) == 0
    assert ledger_module.main(["merge", str(whole), "--ledger", str(ledger)]) == 0
    out = capsys.readouterr().out
    assert f"{part}: 3 new entries" in out  # two runs and their pair at seed 1
    assert f"{whole}: 3 new entries" in out  # seed 0's; seed 1's matched to 1e-9
    held = json.loads(ledger.read_text())
    assert [(r["method"], r["seed"]) for r in held["runs"]] == [
        ("psro", 0), ("psro", 1), ("self-play", 0), ("self-play", 1)]
    # the tables: each method's mean over seeds is the suite report's, the pair's score its
    md = write_suite_report(whole)
    report = {r["method"]: r for r in csv.DictReader((md.parent / "results.csv").open())}
    assert ledger_module.main(["table", "--ledger", str(ledger)]) == 0
    table = capsys.readouterr().out
    for method in ("psro", "self-play"):
        mean = float(report[method]["exploitability_final"])
        assert f"| {method} | 2 | {mean:.3f} +- " in table
    (pair,) = json.loads((whole / "kuhn-sampled" / "head_to_head.json").read_text())["pairs"]
    assert f"| psro | self-play | {pair['score']:+.3f} +- {pair['half_width']:.3f} |" in table
    # a run measured otherwise than the ledger's: the merge stops, naming it, and writes nothing
    bound = whole / "kuhn-sampled" / "psro" / "seed-0.bound.json"
    record = json.loads(bound.read_text())
    bound.write_text(json.dumps({**record, "exploitability": record["exploitability"] + 0.01}))
    before = ledger.read_bytes()
    assert ledger_module.main(["merge", str(whole), "--ledger", str(ledger)]) == 2
    assert "Kuhn sampled · psro · 0 has exploitability" in capsys.readouterr().err
    assert ledger.read_bytes() == before
    assert ledger_module.main(["merge", str(tmp_path / "none"), "--ledger", str(ledger)]) == 2


def test_a_ledger_of_another_suite_or_method_order_is_refused(ledger_module):
    ledger = {"suite": "large-10m", "methods": {"G": ["a", "b"]}, "runs": [], "pairs": []}
    with pytest.raises(ledger_module.LedgerError, match="holds suite 'other'"):
        ledger_module.merge(ledger, "other", {}, [], [], "DIR")
    with pytest.raises(ledger_module.LedgerError, match="has the methods \\['b', 'a'\\]"):
        ledger_module.merge(ledger, "large-10m", {"G": ["b", "a"]}, [], [], "DIR")


def test_a_method_added_at_the_end_extends_the_ledgers_order(ledger_module):
    """A suite file that gains a method at the end keeps the others' places (their pairs are
    seeded by them): folders run before and after the method was added merge, in any order."""
    ledger = {"suite": "large-10m", "methods": {"G": ["a", "b"]}, "runs": [], "pairs": []}
    ledger_module.merge(ledger, "large-10m", {"G": ["a", "b", "c"]}, [], [], "DIR")
    assert ledger["methods"]["G"] == ["a", "b", "c"]
    ledger_module.merge(ledger, "large-10m", {"G": ["a", "b"]}, [], [], "OLD")
    assert ledger["methods"]["G"] == ["a", "b", "c"]
    with pytest.raises(ledger_module.LedgerError, match="has the methods \\['a', 'c'\\]"):
        ledger_module.merge(ledger, "large-10m", {"G": ["a", "c"]}, [], [], "DIR")


def test_an_exact_record_replaces_the_monte_carlo_one_of_the_same_runs(ledger_module):
    """A pair played exactly replaces its Monte Carlo record (the same runs' iterations); a
    Monte Carlo record merged after it leaves it; two exact records must agree; a record of
    other iterations is refused."""
    def pair(kind, score, iterations=(3, 3)):
        row = {"game": "G", "a": "a", "b": "b", "seed": 0, "score": score, "first": score,
               "first_std_err": 0.0 if kind == "exact" else 0.02, "second": score,
               "second_std_err": 0.0 if kind == "exact" else 0.02,
               "iterations": list(iterations)}
        return row if kind is None else {**row, "kind": kind}

    ledger = {"suite": "s", "methods": {"G": ["a", "b"]}, "runs": [], "pairs": []}
    ledger_module.merge(ledger, "s", {}, [], [pair(None, 0.10)], "OLD")  # an older ledger's
    assert ledger_module.merge(ledger, "s", {}, [], [pair("monte carlo", 0.10)], "MC") == 0
    assert ledger_module.merge(ledger, "s", {}, [], [pair("exact", 0.07)], "EXACT") == 1
    assert ledger["pairs"] == [pair("exact", 0.07)]
    assert ledger_module.merge(ledger, "s", {}, [], [pair("monte carlo", 0.10)], "MC") == 0
    assert ledger["pairs"] == [pair("exact", 0.07)]
    assert "| exact | 0: +0.070 |" in ledger_module.tables(
        {**ledger, "runs": [{"game": "G", "method": "a", "seed": 0, "exploitability": 0.1,
                             "exploitability_kind": "exact", "env_steps": 10}]})
    with pytest.raises(ledger_module.LedgerError, match="G · a · b · 0 has score 0.08"):
        ledger_module.merge(ledger, "s", {}, [], [pair("exact", 0.08)], "OTHER")
    with pytest.raises(ledger_module.LedgerError, match="G · a · b · 0 has"):
        ledger_module.merge(ledger, "s", {}, [], [pair("monte carlo", 0.1, (4, 4))], "NEW")
