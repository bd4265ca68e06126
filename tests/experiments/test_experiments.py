"""Smoke tests: every experiment script runs at a tiny budget and writes its figure, run
directories and report."""

import importlib
import sys

import pytest
from conftest import ROOT

EXPERIMENTS = ROOT / "experiments"


@pytest.fixture(autouse=True)
def experiments_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXPERIMENTS))


@pytest.mark.parametrize("module,figure,extra", [
    ("cyclic_games", "cyclic.png", []),
    ("poker", "poker.png", ["--solvers", "nash", "pfsp"]),
    ("three_player", "three_player.png", []),
    ("general_sum", "general_sum.png", []),
])
def test_experiment_smoke(module, figure, extra, tmp_path, capsys):
    mod = importlib.import_module(module)
    mod.main(["--quick", "--out", str(tmp_path)] + extra)
    assert (tmp_path / figure).read_bytes().startswith(b"\x89PNG")
    reports = list(tmp_path.glob("report*/report.html"))
    assert reports
    runs = [p for p in tmp_path.iterdir() if (p / "metrics.csv").is_file()]
    assert runs
    out = capsys.readouterr().out
    assert "exploitability" in out
    sys.modules.pop(module, None)
