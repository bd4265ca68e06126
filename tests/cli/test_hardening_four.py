"""The fourth hardening round, class by class, one table per class: settings without bounds
(and best responses that diverge), game strings and suite labels, caches and inputs read
before they are checked, and library warnings on commands that worked. Each refusal is one
line on stderr with exit status 2 from the CLI (a typed exception from Python), made before
anything is written."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from conftest import ROOT

import games
import psro
from psro.bench import Method, Suite, SuiteGame, run_suite
from psro.cli import main


def _refused(argv: list[str], match: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert match in err, err
    assert len(err.splitlines()) == 1, err


# -- numeric settings have stated ranges; a diverged best response is never a member -------
RANGES = [
    (["--diversity", "1e40"], "diversity must be a number in (0, 1000]; got 1e+40"),
    (["--diversity", "0"], "diversity must be a number in (0, 1000]; got 0.0"),
    (["--ppo", "learning_rate=5"], "ppo.learning_rate must be a number in [0, 1]"),
    (["--ppo", "env_steps=0"], "ppo.env_steps must be an integer from 1 to"),
    (["--time-budget", "-1"], "must be a positive number"),
    (["--time-budget", "-1e3"], "must be a positive number"),
    (["--target-exploitability", "-1e-3"], "target_exploitability must be"),
]


@pytest.mark.parametrize("flags,match", RANGES, ids=[" ".join(r[0]) for r in RANGES])
def test_numeric_settings_out_of_range_are_refused(flags, match, tmp_path, capsys):
    _refused(["run", "--game", "kuhn_poker", "--algorithm", "diverse", "--oracle", "ppo",
              "--iterations", "1", "--out", str(tmp_path / "o"), *flags], match, capsys)
    assert not (tmp_path / "o").exists()


def test_a_best_response_that_diverges_ends_the_run_and_joins_nothing(tmp_path):
    from psro.extensive_form.members import network_of

    run = psro.PSRO("kuhn_poker", oracle="ppo", out=tmp_path / "r",
                    ppo={"env_steps": 600, "num_envs": 8, "steps_per_update": 128})
    run.run(iterations=1)
    net = network_of(run.population[0][-1]).net
    with torch_no_grad():
        next(net.parameters()).view(-1)[0] = float("nan")  # the next warm start diverged
    with pytest.raises(psro.TrainingError, match="a PPO best response diverged"):
        run.run(iterations=2)
    assert [len(pop) for pop in run.population] == [2, 2]
    assert psro.load_run(tmp_path / "r").iteration == 1


def torch_no_grad():
    import torch

    return torch.no_grad()


# -- game strings ----------------------------------------------------------------------------
GAME_STRINGS = [
    ("kuhn_poker(players=3,players=2)", "parameter 'players' of 'kuhn_poker' is given twice"),
    ("turn_based_simultaneous_game(game=goofspiel(num_cards=4,num_cards=3))",
     "parameter 'num_cards' of 'goofspiel' is given twice"),
    ("disc(n=10,seed=3,seed=4)", "parameter 'seed' of 'disc' is given twice"),
    ("kuhn_poker(players=99999999999999999999999)",
     "parameter players of 'kuhn_poker' must be an integer from -2,147,483,648 to "
     "2,147,483,647"),
    ("debate(size=8,pixels=6,reveals=3,reveals=2)", "parameter 'reveals' of 'debate' is given "
                                                    "twice"),
    ("debate(judge_seed=99999999999999999999999)", "parameter judge_seed of 'debate' must be "
                                                   "an integer from"),
]


@pytest.mark.parametrize("spec,match", GAME_STRINGS, ids=[g[0] for g in GAME_STRINGS])
def test_game_strings_that_openspiel_would_read_otherwise_are_refused(spec, match, capsys,
                                                                     tmp_path):
    with pytest.raises(games.GameError, match=match.replace("(", r"\(").replace(")", r"\)")):
        games.load(spec)
    _refused(["run", "--game", spec, "--iterations", "1", "--out", str(tmp_path / "o")], match,
             capsys)
    assert not (tmp_path / "o").exists()


def test_parameters_given_once_at_each_level_load():
    game = games.load("turn_based_simultaneous_game(game=goofspiel(num_cards=4,imp_info=true))")
    assert game.num_players == 2


# -- suite labels and suite identity, checked before the folder is made ----------------------
def _suite(labels: list[str], game_label: str = "Kuhn", name: str = "s",
           game: str = "kuhn_poker") -> Suite:
    return Suite(name, (SuiteGame(game, game_label, "walkable", tuple(
        Method(label, {"oracle": "exact"}) for label in labels), 0.05,
        thresholds=(0.1,)),), seeds=(0,))


LABELS = [
    (["psro nash", "psro, nash"], "Kuhn", "would share the folder 'psro-nash'"),
    (["日本語", "한국어"], "Kuhn", "would share the folder 'x'"),
    (["a" * 150], "Kuhn", "makes a folder name of 150 characters; at most 100"),
    (["reference.json"], "Kuhn", "would be the folder 'reference.json'"),
    (["head_to_head.json"], "Kuhn", "would be the folder 'head_to_head.json'"),
    ([".."], "Kuhn", "would be the folder '..'"),
    (["psro"], "report", "the game label 'report' would be the folder 'report'"),
    (["psro"], "suite.json", "would be the folder 'suite.json'"),
]


@pytest.mark.parametrize("labels,game_label,match", LABELS, ids=[str(c[:2]) for c in LABELS])
def test_suite_labels_are_checked_before_the_folder_is_made(labels, game_label, match,
                                                            tmp_path):
    with pytest.raises(psro.ConfigError, match=match.replace("(", r"\(").replace(".", r"\.")):
        run_suite(_suite(labels, game_label), tmp_path / "out", quiet=True)
    assert not (tmp_path / "out").exists()


def test_a_suite_of_the_same_name_that_would_drop_runs_is_refused(tmp_path):
    out = tmp_path / "out"
    run_suite(_suite(["psro"]), out, quiet=True)
    before = (out / "suite.json").read_bytes()
    with pytest.raises(psro.ConfigError, match="another suite named 's'.*no method 'psro'"):
        run_suite(_suite(["other"]), out, quiet=True)
    with pytest.raises(psro.ConfigError, match="game 'Kuhn' has game 'rps'"):
        run_suite(_suite(["psro"], game="rps"), out, quiet=True)
    assert (out / "suite.json").read_bytes() == before
    run_suite(_suite(["psro", "more"]), out, quiet=True)  # adding a method keeps the runs
    assert (out / "kuhn" / "psro" / "seed-0.done.json").is_file()


def test_a_suite_file_named_like_a_built_in_suite_is_not_taken_for_it(tmp_path, capsys):
    (tmp_path / "quick.toml").write_text(
        'name = "quick"\nseeds = [0]\n[[games]]\ngame = "kuhn_poker"\nlabel = "Kuhn"\n'
        'tier = "walkable"\ntime_budget_s = 0.05\nthresholds = [0.1]\n[[games.methods]]\n'
        'label = "mine"\nsettings = {oracle = "exact"}\n')
    out = tmp_path / "out"
    run_suite(_suite(["psro"], name="quick"), out, quiet=True)  # a folder of suite 'quick'
    _refused(["bench", str(tmp_path / "quick.toml"), "--out", str(out)],
             "holds the runs of another suite named 'quick'", capsys)


# -- caches and inputs ------------------------------------------------------------------------
@pytest.mark.parametrize("damage", [b"", b"PK\x03\x04 cut", b"\x93NUMPY cut"],
                         ids=["emptied", "cut zip", "not a zip"])
def test_a_damaged_judge_cache_is_trained_again(damage, tmp_path, monkeypatch, capsys):
    from games import judge as judges

    monkeypatch.setenv("PSRO_CACHE", str(tmp_path))
    monkeypatch.setattr(judges, "_JUDGES", {})
    path = judges.cache_file(4, 3, 0)
    path.parent.mkdir(parents=True)
    path.write_bytes(damage)
    assert main(["judge", "--size", "4", "--pixels", "3"]) == 0
    said = capsys.readouterr().out
    assert "the cache file was damaged; it was replaced" in said
    assert judges.cached_judge(4, 3, 0) is not None  # the file holds a judge again
    games.load("debate(size=4,reveals=3)")


def _header(shape: tuple[int, ...]) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": "<f8", "fortran_order": False,
                                                  "shape": shape})
    return buffer.getvalue()


def test_a_payoff_file_claiming_a_huge_shape_is_refused_from_its_header(tmp_path, capsys):
    npy = tmp_path / "big.npy"
    npy.write_bytes(_header((1000, 1_000_000)))  # 64 bytes that claim 8 GB
    npz = tmp_path / "big.npz"
    with zipfile.ZipFile(npz, "w") as archive:
        archive.writestr("a.npy", _header((3000, 3000)))
    for path in (npy, npz):
        _refused(["solve", str(path)], "is larger than psro solve takes", capsys)


# -- a command that worked prints only its own lines -----------------------------------------
def test_a_report_with_labels_the_font_lacks_prints_only_its_own_lines(tmp_path):
    psro.PSRO("kuhn_poker", "exact", out=tmp_path / "run").run(iterations=2)
    done = subprocess.run(
        [sys.executable, "-W", "default", "-m", "psro.cli", "report", str(tmp_path / "run"),
         "--label", f"{tmp_path / 'run'}=日本語の実験", "--out", str(tmp_path / "rep")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert done.stdout.strip().splitlines() == [
        f"wrote {tmp_path / 'rep'}/report.md, {tmp_path / 'rep'}/report.html, table.tex, "
        f"table.csv and the figures in {tmp_path / 'rep'}"]


# -- what a paper run got wrong or hid ----------------------------------------------------
def test_commands_leave_no_lock_file_behind(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "--game", "kuhn_poker", "--iterations", "2", "--out", str(out),
                 "--quiet"]) == 0
    assert main(["report", str(out)]) == 0
    psro.load_run(out)
    assert not list(tmp_path.rglob(".lock"))


def test_labels_name_the_oracle_and_the_xdo_solver_that_ran(tmp_path):
    from psro.reports import RunRecord
    from psro.reports.groups import group_runs

    psro.PSRO("kuhn_poker", oracle="exact", out=tmp_path / "exact").run(iterations=1)
    psro.PSRO("kuhn_poker", oracle="ppo", out=tmp_path / "ppo",
              ppo={"env_steps": 600, "num_envs": 8, "steps_per_update": 128}).run(iterations=1)
    psro.PSRO("kuhn_poker", algorithm="xdo", out=tmp_path / "xdo").run(iterations=1)
    assert psro.load_run(tmp_path / "xdo").config.xdo_solver == "lp"  # not null: what ran
    groups = group_runs([RunRecord(tmp_path / n) for n in ("exact", "ppo")])
    assert sorted(g.label for g in groups) == ["psro, exact, nash", "psro, ppo, nash"]
    [alone] = group_runs([RunRecord(tmp_path / "exact")])
    assert alone.label == "psro, exact, nash"


def test_xdo_with_trained_responses_says_it_did_not_converge(tmp_path, capsys):
    assert main(["run", "--game", "kuhn_poker", "--algorithm", "xdo", "--oracle", "ppo",
                 "--ppo", "env_steps=3000", "--iterations", "10", "--out", str(tmp_path / "x"),
                 "--quiet"]) == 0
    said = capsys.readouterr().out
    run = psro.load_run(tmp_path / "x")
    assert run.stop_reason == "no_new_actions" and run.metrics[-1]["exploitability"] > 0.1
    assert "this is not convergence" in said


def test_a_large_game_run_says_what_it_measures_last_and_its_interval(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text('max_nodes = 10\n[lower_bound]\nenv_steps = 1000\n')
    assert main(["run", "--game", "kuhn_poker", "--config", str(config), "--oracle", "ppo",
                 "--ppo", "env_steps=600", "--ppo", "num_envs=8", "--iterations", "1",
                 "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-2].startswith("measuring the final meta-policy's approximate "
                                "exploitability (a lower bound): a PPO best response of 1,000")
    assert "(approximate lower bound, +- " in lines[-1] and "at 95%)" in lines[-1]
    row = psro.load_run(tmp_path / "r").metrics[-1]
    parts = sum(row[k] for k in ("oracle_s", "evaluation_s", "meta_solver_s",
                                 "exploitability_s", "write_s"))
    assert row["exploitability_s"] > 0 and parts <= row["wall_time_s"]


def test_a_meta_solver_refusal_comes_before_the_tree_is_walked(monkeypatch):
    from psro.extensive_form import sequence_form

    def walked(*args, **kwargs):
        raise AssertionError("the tree was walked before the refusal")

    monkeypatch.setattr(sequence_form.SequenceFormGame, "__init__", walked)
    with pytest.raises(psro.ConfigError, match="nash and equilibria solve two-player games"):
        psro.PSRO("leduc_poker(players=3)", meta_solver="nash")


def test_the_quick_suite_says_it_is_a_smoke_test():
    from psro.bench.suites import SUITES

    assert SUITES["quick"].description.startswith("a smoke test")
