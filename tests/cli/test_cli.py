"""The psro command: runs, resume, solve, games, and one-line errors with exit status 2."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import psro
from psro.cli import main


def _error_line(capsys, argv):
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2, err
    assert len(err) == 1 and "Traceback" not in err[0]
    return err[0]


def test_run_resume_and_progress(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--game", "kuhn_poker", "--oracle", "exact", "--meta-solver", "nash",
                 "--iterations", "3", "--seed", "0", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "backend local: tasks run in this process"  # where the work runs
    assert lines[1] == "runs until iteration 3"
    assert lines[2].startswith("seed 0 has no effect: this configuration is deterministic")
    assert lines[3].startswith("hint: on two-player zero-sum games small enough to walk, "
                               "--algorithm xdo")
    assert lines[4].split() == ["iter", "pop", "time", "left", "exploit", "best", "steps",
                                "steps/s", "BR/exact"]
    rows = lines[5:9]
    assert [r.split()[0] for r in rows] == ["0/3", "1/3", "2/3", "3/3"]
    assert len({len(r) for r in lines[4:9]}) == 1  # fixed width: the columns never shift
    assert rows[1].split()[4] == "4.167e-01" and rows[1].split()[8] == "1.00"  # 5/12
    assert all("\r" not in r and "\x1b" not in r for r in lines)  # plain lines in a log
    assert lines[9].startswith("done (iterations): iteration 3")
    assert main(["run", "--resume", "--out", str(out), "--iterations", "9",
                 "--backend", "processes", "--workers", "2"]) == 0
    text = capsys.readouterr().out
    assert "resuming" in text and "runs until iteration 9" in text
    assert any(line.split()[:1] == ["9/9"] for line in text.splitlines())
    assert "backend processes: 2 worker process(es) on this machine" in text
    assert (out / "metrics.csv").read_text().count("\n") == 11
    # --iterations counts every iteration: below the run's, it runs nothing, and says so
    assert main(["run", "--resume", "--out", str(out), "--iterations", "2", "--quiet"]) == 0
    assert "note: the run is at iteration 9 already, so --iterations 2 runs nothing" in \
        capsys.readouterr().out
    assert (out / "metrics.csv").read_text().count("\n") == 11
    # so does a time budget the run has spent (it ran nothing without a word)
    spent = psro.load_run(out).state.wall_time_s
    assert main(["run", "--resume", "--out", str(out), "--time-budget", f"{spent / 2:g}",
                 "--quiet"]) == 0
    assert f"so --time-budget {spent / 2:g} runs nothing: --time-budget counts the time of " \
        f"every call" in capsys.readouterr().out
    assert (out / "metrics.csv").read_text().count("\n") == 11
    assert "already holds a run" in _error_line(capsys, ["run", "--game", "kuhn_poker",
                                                         "--out", str(out)])
    assert "unknown backend" in _error_line(capsys, ["run", "--resume", "--out", str(out),
                                                     "--backend", "cluster"])


def test_the_xdo_hint_is_printed_only_for_psro_on_walked_two_player_zero_sum_games(tmp_path,
                                                                                  capsys):
    def hinted(*argv):
        assert main(["run", "--iterations", "1", "--out", str(tmp_path / "h"), "--overwrite",
                     *argv]) == 0
        return [line for line in capsys.readouterr().out.splitlines()
                if line.startswith("hint: ")]

    assert "needs far fewer trained best responses" in hinted(
        "--game", "kuhn_poker", "--oracle", "ppo", "--ppo", "env_steps=500", "--ppo",
        "num_envs=16")[0]
    assert "psro solve-tree GAME solves the whole game" in hinted("--game", "kuhn_poker")[0]
    assert hinted("--game", "kuhn_poker", "--algorithm", "xdo") == []
    assert hinted("--game", "kuhn_poker(players=3)", "--meta-solver", "prd") == []
    assert hinted("--game", "rps") == []  # a matrix game: walked, but nothing to restrict


@pytest.mark.slow
def test_the_anytime_hint_is_printed_for_psro_on_games_too_large_to_walk():
    """On a game too large to walk the hint names anytime PSRO, where the oracle declares what
    its regret matching needs (an oracle registered without rounds gets no hint)."""
    import psro
    from psro.cli.progress import variant_hint
    from psro.oracles.ppo import PPOOracle

    def hint(oracle, **settings):
        return variant_hint(psro.PSRO("phantom_ttt(obstype=reveal-nothing)", oracle,
                                      ppo={"env_steps": 128}, **settings))

    assert "--algorithm anytime --anytime-episodes 128" in hint("ppo")
    assert hint("ppo", algorithm="anytime", anytime_episodes=4) is None
    no_rounds = "no_rounds_" + str(id(object()))
    psro.oracles.register(no_rounds, PPOOracle.build, turn_based=True, settings=("ppo", "seed"),
                          capabilities=("trains", "targets"))
    try:
        assert hint(no_rounds) is None
    finally:  # other tests' refusals list the registered oracles
        psro.oracles._ORACLES.pop(no_rounds)


def test_a_time_budget_alone_runs_until_the_budget(tmp_path, capsys):
    assert main(["run", "--game", "leduc_poker", "--time-budget", "2", "--quiet",
                 "--out", str(tmp_path / "r")]) == 0
    import psro

    run = psro.load_run(tmp_path / "r")
    assert run.iteration > 20 and run.metrics[-1]["wall_time_s"] > 1.5  # (writing after it)
    assert "done (time_budget)" in capsys.readouterr().out
    assert main(["run", "--resume", "--out", str(tmp_path / "r"), "--target-exploitability",
                 "1e-9"]) == 0  # the config's budget still holds: spent already
    assert "done (time_budget)" in capsys.readouterr().out
    # A target a little below where the run stands (how far 2 s get depends on the machine).
    target = f"{0.9 * run.metrics[-1]['exploitability']:.3g}"
    assert main(["run", "--resume", "--out", str(tmp_path / "r"), "--target-exploitability",
                 target, "--time-budget", "60"]) == 0
    said = capsys.readouterr().out
    assert f"runs until 60 s of run time or exploitability {target} or below, whichever " \
           "comes first" in said and "done (target_exploitability)" in said


def test_the_progress_line_of_a_trained_oracle_shows_steps_and_the_response_share():
    import psro
    from psro.cli.progress import ProgressLine, response_share

    run = psro.PSRO("kuhn_poker", "ppo", seed=1, ppo={"env_steps": 2000})
    rows = run.run(iterations=2)
    share = response_share(rows[1], rows[0])
    expected = sum(rows[1][f"response_gain_p{p}"] for p in range(2)) / \
        sum(rows[0][f"gain_p{p}"] for p in range(2))
    assert share == max(0.0, expected) and 0 <= share <= 1 + 1e-9
    line = ProgressLine()
    line.line(run, rows[0])
    cells = line.line(run, rows[1]).split()
    assert cells[0] == "1/2" and cells[6].endswith("k") and cells[7].endswith("k")
    assert cells[8] == f"{share:.2f}"


def test_config_file_and_meta_solver_options(tmp_path, capsys):
    config = tmp_path / "run.toml"
    config.write_text('game = "biased_rps"\nmeta_solver = "latest_mix"\niterations = 3\n'
                      '[meta_solver_options]\np = 0.5\n')
    assert main(["run", "--config", str(config), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    assert "done" in capsys.readouterr().out


def test_run_refuses_game_too_large(tmp_path, capsys):
    config = tmp_path / "c.toml"
    config.write_text('game = "leduc_poker"\nmax_nodes = 1000\n')
    line = _error_line(capsys, ["run", "--config", str(config), "--out", str(tmp_path / "r")])
    assert "--oracle ppo" in line
    assert not (tmp_path / "r").exists()


def test_solve_files(tmp_path, capsys):
    csv = tmp_path / "brps.csv"
    csv.write_text("0,-1,2\n1,0,-3\n-2,3,0\n")
    assert main(["solve", str(csv)]) == 0
    out = capsys.readouterr().out
    assert "player 0 mixture: [0.5     , 0.333333, 0.166667]" in out and "NashConv" in out
    npz = tmp_path / "bos.npz"
    np.savez(npz, a=np.array([[3.0, 0], [0, 2]]), b=np.array([[2.0, 0], [0, 3]]))
    assert main(["solve", str(npz), "--solver", "nash"]) == 0
    np.save(tmp_path / "m.npy", np.array([[1.0, -1], [-1, 1]]))
    assert main(["solve", str(tmp_path / "m.npy"), "--solver", "prd",
                 "--option", "iterations=500"]) == 0
    capsys.readouterr()
    (tmp_path / "ragged.csv").write_text("1,2\n3\n")
    assert "rectangular" in _error_line(capsys, ["solve", str(tmp_path / "ragged.csv")])
    (tmp_path / "nan.csv").write_text("1,nan\n3,4\n")
    assert "NaN" in _error_line(capsys, ["solve", str(tmp_path / "nan.csv")])
    (tmp_path / "x.txt").write_text("1")
    assert "unsupported" in _error_line(capsys, ["solve", str(tmp_path / "x.txt")])
    for fake in ("fake.npz", "fake.npy"):  # numpy said "This file contains pickled data"
        (tmp_path / fake).write_text("1,2\n3,4\n")
        said = _error_line(capsys, ["solve", str(tmp_path / fake)])
        assert f"not a {fake[-4:]} file" in said and "pickle" not in said


def test_solve_reads_the_arrays_of_an_npz_as_players_in_the_order_saved(tmp_path, capsys):
    """The zero-sum game A = [[3, -2], [-2, 1]] saved as "zeta" (A) then "a" (-A): player 0's
    value is -1/8 (it mixes 3/8 on its first strategy: 3p - 2(1 - p) = -2p + (1 - p)); read
    in the names' sorted order, "a" would have made player 0's value +1/8."""
    npz = tmp_path / "order.npz"
    mine = np.array([[3.0, -2.0], [-2.0, 1.0]])
    np.savez(npz, zeta=mine, a=-mine)
    assert main(["solve", str(npz)]) == 0
    out = capsys.readouterr().out
    assert "values: player 0 -0.125, player 1 0.125" in out


def test_games_lists_catalogue_and_openspiel(capsys):
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    assert "biased_rps" in out and "leduc_poker" in out
    assert "debate " in out and "reveals=6" in out


def test_judge_command_trains_then_reads_the_cache(tmp_path, monkeypatch, capsys):
    from games import judge as judges

    monkeypatch.setenv("PSRO_CACHE", str(tmp_path))
    monkeypatch.setattr(judges, "_JUDGES", {})
    assert main(["judge", "--size", "4", "--pixels", "2", "--seed", "5"]) == 0
    first = capsys.readouterr().out
    assert "trained in" in first and str(tmp_path) in first
    monkeypatch.setattr(judges, "_JUDGES", {})
    assert main(["judge", "--size", "4", "--pixels", "2", "--seed", "5"]) == 0
    again = capsys.readouterr().out
    assert "read from the cache" in again
    checksum = judges.train_judge(4, 2, 5).checksum
    assert checksum in first and checksum in again
    assert "not written" not in first + again
    # a cache folder that cannot be written: the judge is trained and used, and the file line
    # says it was not kept (it named the path as if it had been)
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("PSRO_CACHE", str(tmp_path / "a_file"))
    monkeypatch.setattr(judges, "_JUDGES", {})
    assert main(["judge", "--size", "4", "--pixels", "2", "--seed", "5"]) == 0
    unkept = capsys.readouterr().out
    assert "trained in" in unkept and checksum in unkept
    assert "(not written: the cache folder cannot be written; PSRO_CACHE names another)" \
        in unkept


@pytest.mark.parametrize("argv, text", [
    (["judge", "--size", "5"], "--size must be one of 8, 4; got 5"),
    (["judge", "--size", "4", "--pixels", "17"], "--pixels must be from 1 to 16"),
    (["run", "--game", "rps", "--diversity", "1", "--out", "x"], "diversity has no effect"),
    (["run", "--game", "rps", "--algorithm", "diverse", "--diversity", "-1", "--out", "x"],
     "diversity must be a number in (0, 1000]"),
])
def test_bad_judge_and_diversity_options_are_one_line(argv, text, tmp_path, monkeypatch,
                                                      capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and text in err[0]


def test_console_script_exit_code(tmp_path):
    result = subprocess.run([sys.executable, "-m", "psro.cli", "run", "--game", "nope",
                             "--out", str(tmp_path / "x")], capture_output=True, text=True,
                            cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "unknown game 'nope'" in result.stderr


def test_a_closed_pipe_ends_the_command_quietly():
    """``psro games | head -2``: the reader leaves before the listing ends; that printed
    "psro games: error: Broken pipe" and exited 2. Now: nothing on stderr, status 141 (128 +
    SIGPIPE, what a command killed by the signal reports). Here the pipe has no reader from
    the start, so the first write fails whatever the timing."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([sys.executable, "-m", "psro.cli", "games"], stdout=write_end,
                                stderr=subprocess.PIPE, text=True, cwd=ROOT)
    finally:
        os.close(write_end)
    assert result.stderr == "" and result.returncode == 141


def test_unparsable_game_string_is_one_line(tmp_path):
    """OpenSpiel's C++ parser prints its own message to stderr before raising; the CLI's
    error names it, so only that one line is shown."""
    result = subprocess.run([sys.executable, "-m", "psro.cli", "run", "--game", "leduc_poker(",
                             "--out", str(tmp_path / "x")], capture_output=True, text=True,
                            cwd=ROOT)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "psro run: error: cannot parse game 'leduc_poker(': Missing closing bracket ')'. "
        "(`psro games` lists the games)"]


@pytest.mark.parametrize("argv, text", [
    (["run", "--game", "kuhn_poker", "--iterations", "abc"],
     "psro run: error: argument --iterations: invalid int value: 'abc'"),
    (["run", "--bogus"], "psro run: error: unrecognized arguments: --bogus; `psro run --help`"),
    (["run", "--resume", "runs/x"], "psro run: error: unrecognized arguments: runs/x; "
                                    "`psro run --help` lists what is accepted"),
    (["games", "--bogus"], "psro games: error: unrecognized arguments: --bogus"),
    ([], "the following arguments are required: command"),
    (["frobnicate"], "invalid choice: 'frobnicate'"),
    (["bench", "quick", "--seeds"], "argument --seeds: expected one argument"),
])
def test_the_parsers_own_errors_are_one_line_with_exit_status_2(argv, text, capsys):
    """What argparse refuses (a bad number, an unknown option or command, a missing value)
    is one line naming it and where the accepted forms are listed, not its usage block."""
    line = _error_line(capsys, argv)
    assert text in line and "--help` lists what is accepted" in line


def test_help_exits_with_status_0(capsys):
    assert main(["solve", "--help"]) == 0
    assert capsys.readouterr().out.startswith("usage: psro solve")


def test_a_run_directory_is_locked_while_a_run_holds_it(tmp_path, capsys):
    import psro

    run_dir = tmp_path / "run"
    psro.PSRO("kuhn_poker", out=run_dir).run(iterations=2)
    held = psro.PSRO.resume(run_dir)  # holds the directory's lock until its run() ends
    assert "in use by another run" in _error_line(capsys, ["run", "--resume", "--out",
                                                           str(run_dir)])
    held.run(iterations=3)
    assert main(["run", "--resume", "--out", str(run_dir), "--iterations", "4",
                 "--quiet"]) == 0


def test_resume_honours_stopping_flags_and_refuses_config_flags(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "--game", "kuhn_poker", "--iterations", "2", "--out", str(out),
                 "--quiet"]) == 0
    line = _error_line(capsys, ["run", "--resume", "--out", str(out), "--game", "leduc_poker",
                                "--seed", "0"])
    assert "--game, --seed cannot change when a run is resumed" in line
    assert main(["run", "--resume", "--out", str(out), "--iterations", "50",
                 "--target-exploitability", "1e-6", "--quiet"]) == 0
    done = capsys.readouterr().out
    assert "done (target_exploitability)" in done and "iteration 50" not in done


def test_resume_cleans_up_after_a_kill_and_never_follows_links(tmp_path, capsys):
    import psro

    out = tmp_path / "run"
    psro.PSRO("kuhn_poker", out=out).run(iterations=2)
    leftovers = [out / ".metrics.csv.abc.tmp", out / "iterations" / ".000003.npz.def.tmp"]
    for file in leftovers:
        file.write_bytes(b"half")
    outside = tmp_path / "outside.jsonl"
    outside.write_text("not the run's\n")
    log = (out / "oracle_log.jsonl").read_bytes()
    (out / "oracle_log.jsonl").unlink()
    (out / "oracle_log.jsonl").symlink_to(outside)  # planted: refused, never written through
    assert main(["run", "--resume", "--out", str(out), "--iterations", "3", "--quiet"]) == 2
    assert "oracle_log.jsonl is not a regular file" in capsys.readouterr().err
    assert outside.read_text() == "not the run's\n"
    assert (out / "oracle_log.jsonl").is_symlink()
    (out / "oracle_log.jsonl").unlink()
    (out / "oracle_log.jsonl").write_bytes(log)
    assert main(["run", "--resume", "--out", str(out), "--iterations", "3", "--quiet"]) == 0
    assert not any(file.exists() for file in leftovers)
