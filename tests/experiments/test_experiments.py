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


def test_ppo_profile_accounts_for_the_iterations_and_their_env_steps():
    """The profile's parts are disjoint shares of the profiled iterations, and its env steps
    are the budget the config sets (2 iterations x 2 players x 600 steps, each best response
    finishing the episodes its 16 games are in: at most 3 more steps a game in Kuhn)."""
    mod = importlib.import_module("bench_ppo_profile")
    result = mod.profile("kuhn_poker", 2, {"env_steps": 600, "steps_per_update": 128,
                                           "num_envs": 16}, seed=0, monte_carlo={})
    parts, total = result["parts"], result["total"]
    assert 2 * 2 * 600 <= result["env_steps"] <= 2 * 2 * (600 + 16 * 3)
    assert parts["rollouts"] > 0 and parts["PPO updates"] > 0 and parts["tabularisation"] > 0
    assert sum(parts.values()) <= total * 1.01
    assert 0 < result["engine"] < parts["rollouts"] + parts["tabularisation"] + 0.1 * total
    sys.modules.pop("bench_ppo_profile", None)
