"""Bad input on the command line, case by case: exit status 2, one line naming the problem,
no file outside the run directory changed and none inside it lost (issue 10's attack list)."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from conftest import DATA

import psro
from psro.cli import main

SECRET = "secret-line-that-must-not-be-echoed"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("made") / "run"
    psro.PSRO("kuhn_poker", "exact", "nash", out=run).run(iterations=2)
    return run


@pytest.fixture
def sandbox(tmp_path, finished_run, monkeypatch) -> Path:
    """A working directory holding a finished run, a run with a stranger's file in it, a
    folder of someone else's notes, a plain file, config files and a fake game file."""
    shutil.copytree(finished_run, tmp_path / "run")
    shutil.copytree(finished_run, tmp_path / "run_plus")
    (tmp_path / "run_plus" / "notes.txt").write_text("mine\n")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "metrics.csv").write_text("someone else's file\n")
    (tmp_path / "file").write_text("x")
    (tmp_path / "backend.toml").write_text('game = "kuhn_poker"\nbackend = {a = 1}\n')
    (tmp_path / "conf.d").mkdir()
    (tmp_path / "game.efg").write_text(f"{SECRET}\n")
    (tmp_path / "seeds.toml").write_text('seeds = [0.5, 1]\n[[games]]\ngame = "kuhn_poker"\n'
                                         'tier = "walkable"\ntime_budget_s = 1\n'
                                         '[[games.methods]]\nlabel = "psro"\n')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_file() else "dir" for p in sorted(root.rglob("*")) if p.name != ".lock"}


def _damage_record(sandbox: Path) -> None:
    """A member's table changed in the last record (the attack of issue 10, case 5): a dense
    table multiplied by 3, or a pure strategy's actions moved to the next action."""
    import numpy as np

    record = sandbox / "run" / "iterations" / "000002.npz"
    with np.load(record) as data:
        arrays = {k: data[k] for k in data.files}
    key = next(k for k in arrays if k.startswith(("table_", "pure_")) and
               not k.endswith("_width"))
    arrays[key] = arrays[key] * 3 if key.startswith("table_") else arrays[key] + 1
    np.savez(record, **arrays)


CASES = [
    # run directories
    (["run", "--game", "kuhn_poker", "--out", "file"], "not a directory"),
    (["run", "--game", "kuhn_poker", "--out", "file/sub"], "cannot write the run directory"),
    (["run", "--game", "kuhn_poker", "--out", ""], "needs a directory name"),
    (["run", "--game", "kuhn_poker", "--out", "notes"], "not empty"),
    (["run", "--game", "kuhn_poker", "--out", "notes", "--overwrite"], "does not hold a run"),
    (["run", "--game", "kuhn_poker", "--out", "run"], "already holds a run"),
    (["run", "--game", "rps", "--out", "run_plus", "--overwrite"],
     "holds files a run does not write (notes.txt)"),
    (["run", "--game", "kuhn_poker"], "--out DIR is required"),
    (["run", "--resume", "--out", "notes"], "not a run directory"),
    (["run", "--resume", "--out", "run", "--game", "leduc_poker"], "--game cannot change"),
    (["run", "--resume", "--out", "run", "--overwrite"], "--overwrite cannot change"),
    (["run", "--resume", "--out", "run", "--backend", "cluster"], "unknown backend"),
    # games
    (["run", "--game", "kuhn_pokr", "--out", "X"], "close matches: kuhn_poker"),
    (["run", "--game", "goofspiel(num_cards=x)", "--out", "X"], "cannot load game"),
    (["run", "--game", "goofspiel(num_cards=-3)", "--out", "X"],
     "parameter num_cards of 'goofspiel' must not be negative"),
    (["run", "--game", "disc(n=0)", "--out", "X"], "parameter n of 'disc' must be an integer >= 1"),
    (["run", "--game", "disc(n=-1)", "--out", "X"], "parameter n of 'disc'"),
    (["run", "--game", "blotto_margin(fields=0)", "--out", "X"],
     "parameter fields of 'blotto_margin'"),
    (["run", "--game", "blotto_margin(coins=-1)", "--out", "X"],
     "parameter coins of 'blotto_margin'"),
    (["run", "--game", "blotto_margin(coins=60,fields=6)", "--out", "X"],
     "8,259,888 strategies per player; the limit is 5,000"),
    (["run", "--game", "random_zero_sum(n=100000)", "--out", "X"], "the limit is 5,000"),
    (["run", "--game", "biased_rps(a=1,a=5)", "--out", "X"], "'a' of 'biased_rps' is given twice"),
    (["run", "--game", "biased_rps(a=nan)", "--out", "X"], "must be a finite number; got nan"),
    (["run", "--game", "efg_game(filename=game.efg)", "--out", "X"],
     "its file game.efg is not in the format the game reads"),
    (["run", "--game", "efg_game(filename=missing.efg)", "--out", "X"], "does not exist"),
    (["run", "--game", "mfg_crowd_modelling", "--out", "X"], "two or more players"),
    (["run", "--game", "catch", "--oracle", "ppo", "--out", "X"], "two or more players"),
    (["run", "--game", "kuhn_poker(players=3)", "--out", "X"], "two-player"),
    # settings
    (["run", "--config", "backend.toml", "--out", "X"], "backend must be a backend name"),
    (["run", "--config", "conf.d", "--out", "X"], "is a directory"),
    (["run", "--game", "kuhn_poker", "--meta-solver", "nsh", "--out", "X"],
     "unknown meta-solver"),
    (["run", "--game", "kuhn_poker", "--oracle", "dqn", "--out", "X"], "unknown oracle"),
    (["run", "--game", "kuhn_poker", "--meta-solver", "fictitious_play",
      "--meta-solver-option", "seed=abc", "--out", "X"], "seed must be a non-negative integer"),
    (["run", "--game", "kuhn_poker", "--meta-solver", "prd", "--meta-solver-option",
      "itrations=5", "--out", "X"], "unknown option"),
    (["run", "--game", "kuhn_poker", "--iterations", "0", "--out", "X"], "positive integer"),
    (["run", "--game", "kuhn_poker", "--time-budget", "nan", "--out", "X"],
     "time_budget_s must be a positive number"),
    (["run", "--game", "kuhn_poker", "--backend", "rays", "--out", "X"],
     "unknown backend 'rays'; accepted: local, processes, ray"),
    (["run", "--game", "kuhn_poker", "--backend", "ray", "--ray-address", "127.0.0.1:1",
      "--out", "X"], "cannot reach a Ray cluster at --ray-address '127.0.0.1:1'"),
    (["run", "--game", "kuhn_poker", "--backend", "ray", "--ray-address", "head-node",
      "--out", "X"], "--ray-address must be auto or HOST:PORT; got 'head-node'"),
    (["run", "--game", "kuhn_poker", "--ray-address", "auto", "--out", "X"],
     "--ray-address (ray_address) needs --backend ray; the backend is 'local'"),
    (["run", "--game", "kuhn_poker", "--backend", "ray", "--workers", "0", "--out", "X"],
     "workers must be a positive integer"),
    (["run", "--game", "kuhn_poker", "--backend", "processes", "--workers", "0", "--out", "X"],
     "workers must be a positive integer"),
    (["run", "--game", "kuhn_poker", "--workers", "2", "--out", "X"],
     "workers 2 has no effect with backend 'local'"),
    (["run", "--game", "kuhn_poker", "--oracle", "ppo", "--ppo", "greedy=maybe", "--out", "X"],
     "ppo.greedy must be true or false"),
    (["run", "--game", "kuhn_poker", "--oracle", "ppo", "--ppo", "num_envs=100000000",
      "--out", "X"], "ppo.num_envs must be an integer from 1 to 65,536"),
    (["run", "--game", "kuhn_poker", "--oracle", "ppo", "--ppo", "hidden=1000000,1000000",
      "--out", "X"], "ppo.hidden must list 1 to 16 widths"),
    (["run", "--game", "kuhn_poker", "--ppo", "env_steps", "--out", "X"],
     "--ppo needs key=value"),
    # reports and solve
    (["report", "run", "--out", "file"], "cannot write the report to file: it is not a folder"),
    (["report", "run", "notes"], "not a run directory"),
    (["report", "run", "--out", ""], "--out needs a folder name"),
    (["exploitability", "--run", "run", "--seed", "3"],
     "--seed sets the PPO lower bound, which kuhn_poker does not need"),
    (["exploitability", "--run", "run", "--ppo", "env_steps=1000", "--seed", "0"],
     "--ppo and --seed set the PPO lower bound"),
    (["solve", "missing.csv"], "does not exist"),
    (["solve", "conf.d"], "payoff file conf.d is not a file"),
    # benchmark suites: refused before the suite's folder is made
    (["bench", "quick", "--out", "suite", "--workers", "0"],
     "workers must be a positive integer"),
    (["bench", "quick", "--out", "suite", "--backend", "cluster"], "unknown backend 'cluster'"),
    (["bench", "quick", "--out", "suite", "--ray-address", "auto"], "needs --backend ray"),
    (["bench", "quick", "--out", "suite", "--seeds", "99999999999999999999"],
     "seeds must be an integer from 1 to 1,000"),
    (["bench", "quick", "--out", "file"], "file is not a folder"),
    (["bench", "seeds.toml", "--out", "suite"], "seed must be an integer from 0"),
]


@pytest.mark.parametrize("argv,match", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_is_one_line_and_touches_nothing(argv, match, sandbox, capsys):
    before = _snapshot(sandbox)
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "Traceback" not in err[0], err
    assert match in err[0]
    assert SECRET not in err[0]
    assert _snapshot(sandbox) == before


@pytest.mark.parametrize("damage,match", [
    (_damage_record, "checksum"),
    (lambda s: (s / "run" / "iterations" / "000002.npz").write_bytes(b"PK\x03\x04cut"),
     "corrupt"),
    (lambda s: (s / "run" / "run.json").write_text("[1]"), "run.json"),
    (lambda s: (s / "run" / "config.json").write_text('{"game": 5}'), "game"),
])
def test_damaged_run_directories_are_refused_and_left_as_they_are(damage, match, sandbox,
                                                                  capsys):
    damage(sandbox)
    before = _snapshot(sandbox)
    for argv in (["run", "--resume", "--out", "run"], ["report", "run", "--out", "rep"]):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and match in err[0], err
        assert _snapshot(sandbox) == before


def test_overwrite_replaces_an_earlier_run_only(sandbox, capsys):
    assert main(["run", "--game", "rps", "--iterations", "1", "--out", "run", "--overwrite",
                 "--quiet"]) == 0
    assert psro.load_run("run").config.game == "rps"
    assert len(list((sandbox / "run" / "iterations").glob("*.npz"))) == 2
    held = psro.PSRO.resume("run")  # a run in progress holds the lock: no overwrite
    before = _snapshot(sandbox)
    assert main(["run", "--game", "kuhn_poker", "--out", "run", "--overwrite"]) == 2
    assert "in use by another run" in capsys.readouterr().err
    assert _snapshot(sandbox) == before
    held.writer.release()


@pytest.fixture
def ppo_runs(tmp_path) -> tuple[Path, Path]:
    """A PPO run of format 2 (networks not vouched for) and the same run converted to
    format 3 (each record holds its networks' SHA-256)."""
    legacy = tmp_path / "legacy"
    shutil.copytree(DATA / "format2_ppo", legacy)
    current = tmp_path / "current"
    shutil.copytree(legacy, current)
    psro.PSRO.resume(current).writer.release()
    return legacy, current


def _nan_weights(pt: Path) -> None:
    import torch

    state = torch.load(pt, weights_only=True)
    first = next(iter(state))
    state[first] = state[first] * float("nan")
    torch.save(state, pt)


@pytest.mark.parametrize("craft,legacy_match", [
    (lambda pt: pt.unlink(), "No such file"),
    (lambda pt: pt.with_suffix(".json").write_text("[1, 2]"), "policy format version None"),
    (lambda pt: pt.with_suffix(".json").write_text(
        pt.with_suffix(".json").read_text().replace('"hidden": [', '"hidden": [1000000, ')),
     "outside 1..16384"),
    (_nan_weights, "NaN or infinite"),
])
def test_crafted_networks_are_refused_by_name(craft, legacy_match, ppo_runs):
    from psro.errors import RunDirectoryError

    for run, match in zip(ppo_runs, (legacy_match, "not the ones the run wrote"), strict=True):
        pt = run / "networks" / "player0_member2.pt"
        craft(pt)
        with pytest.raises(RunDirectoryError, match=match if pt.exists() else
                           "missing|No such file"):
            psro.load_run(run)
        with pytest.raises(RunDirectoryError):
            psro.PSRO.resume(run)


def test_a_full_disk_keeps_the_iterations_already_written(sandbox, monkeypatch, capsys):
    import errno

    import psro.storage.checkpoint.writer as writer

    real_write = writer.atomic_write_bytes

    def no_space(path, write):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(writer, "atomic_write_bytes", no_space)
    before = _snapshot(sandbox / "run" / "iterations")
    assert main(["run", "--resume", "--out", "run", "--iterations", "4", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot write iteration 3" in err[0], err
    assert "No space left on device; the files of the iterations before it are kept" in err[0]
    assert _snapshot(sandbox / "run" / "iterations") == before
    monkeypatch.setattr(writer, "atomic_write_bytes", real_write)
    assert psro.load_run("run").iteration == 2
    assert main(["run", "--resume", "--out", "run", "--iterations", "4", "--quiet"]) == 0
    assert psro.load_run("run").iteration == 4
