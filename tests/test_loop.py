"""End-to-end exact PSRO: convergence, n players, incremental tables, resume, load_run."""

import json

import numpy as np
import pyspiel
import pytest
from conftest import numbers
from open_spiel.python.algorithms import expected_game_score, exploitability

import psro
from psro.errors import RunDirectoryError


def test_kuhn_exact_psro_converges_to_game_value():
    run = psro.PSRO("kuhn_poker", "exact", "nash")
    rows = run.run(iterations=10)
    assert rows[-1]["exploitability"] < 1e-9
    assert rows[-1]["value_p0"] == pytest.approx(-1 / 18, abs=1e-9)
    # OpenSpiel's own exploitability code agrees on our meta-policy.
    theirs = exploitability.nash_conv(pyspiel.load_game("kuhn_poker"), run.meta_policy())
    assert theirs == pytest.approx(rows[-1]["nash_conv"], abs=1e-12)


def test_turn_based_rps_is_not_broken_by_symmetry():
    # psro_v2 in symmetric mode ends at NashConv 0.59 here; seat-specific populations reach 0.
    run = psro.PSRO("turn_based_simultaneous_game(game=matrix_rps())", "exact", "nash")
    rows = run.run(iterations=6)
    assert rows[-1]["nash_conv"] < 1e-9


def test_three_player_kuhn_with_prd():
    run = psro.PSRO("kuhn_poker(players=3)", "exact", "prd",
                    meta_solver_options={"iterations": 1000})
    rows = run.run(iterations=4)
    assert len(rows) == 5 and run.table.shape == (5, 5, 5)
    assert rows[-1]["nash_conv"] < rows[0]["nash_conv"] / 5


def test_nash_on_three_players_is_a_clear_error():
    with pytest.raises(psro.ConfigError, match="two-player"):
        psro.PSRO("kuhn_poker(players=3)", "exact", "nash")


def test_table_grows_incrementally_and_matches_fresh_evaluation():
    run = psro.PSRO("leduc_poker", "exact", "nash")
    rows = run.run(iterations=4)
    assert [r["entries_evaluated"] for r in rows] == [1, 3, 5, 7, 9]
    plans = [np.stack([m.realization_plan(run.tree) for m in pop]) for pop in run.population]
    np.testing.assert_allclose(run.table.values, run.tree.payoff_block(plans), atol=1e-14)


def test_stopping_rules():
    run = psro.PSRO("kuhn_poker", "exact", "nash")
    run.run(iterations=50, target_exploitability=1e-3)
    assert run.stop_reason == "target_exploitability" and run.iteration < 50
    run = psro.PSRO("leduc_poker", "exact", "uniform")
    run.run(iterations=1000, time_budget_s=0.3)
    assert run.stop_reason == "time_budget" and run.iteration < 1000


def test_resume_after_kill_gives_identicalnumbers(tmp_path):
    full = psro.PSRO("leduc_poker", "exact", "nash", out=tmp_path / "full")
    full.run(iterations=8)

    class Kill(Exception):
        pass

    def kill_at_4(run, row):
        if row["iteration"] == 4:
            raise Kill

    killed = psro.PSRO("leduc_poker", "exact", "nash", out=tmp_path / "killed",
                       callbacks=(kill_at_4,))
    with pytest.raises(Kill):
        killed.run(iterations=8)
    # the directory says the run did not end (a report marks it), and why the other did
    assert (psro.load_run(tmp_path / "killed").ended, psro.load_run(tmp_path / "full").ended) \
        == (False, True) and psro.load_run(tmp_path / "full").stop_reason == "iterations"
    resumed = psro.PSRO.resume(tmp_path / "killed")
    assert resumed.iteration == 4
    resumed.use_backend("processes", workers=2)  # the other backend: same numbers
    resumed.run(iterations=8)
    assert numbers(resumed.metrics) == numbers(full.metrics)
    loaded = psro.load_run(tmp_path / "killed")
    assert numbers(loaded.metrics) == numbers(full.metrics)
    assert loaded.ended and loaded.stop_reason == "iterations"
    csv_rows = (tmp_path / "killed" / "metrics.csv").read_text().strip().splitlines()
    assert len(csv_rows) == 1 + 9


def test_load_run_and_meta_policy(tmp_path):
    run = psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path)
    run.run(iterations=10)
    loaded = psro.load_run(tmp_path)
    assert loaded.payoffs.values.shape == (2, 11, 11)
    assert [len(p) for p in loaded.population] == [11, 11]
    game = pyspiel.load_game("kuhn_poker")
    meta = loaded.meta_policy()
    value = expected_game_score.policy_value(game.new_initial_state(), [meta, meta])
    assert value[0] == pytest.approx(-1 / 18, abs=1e-9)
    for name in ["config.json", "run.json", "metrics.csv", "metrics.jsonl", "mixtures.jsonl",
                 "oracle_log.jsonl"]:
        assert (tmp_path / name).is_file()
    assert len(list((tmp_path / "iterations").glob("*.npz"))) == 11


def test_corrupt_checkpoint_is_refused_and_left_untouched(tmp_path):
    psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path).run(iterations=2)
    checkpoint = tmp_path / "iterations" / "000002.npz"
    checkpoint.write_bytes(checkpoint.read_bytes()[:200])
    before = checkpoint.read_bytes()
    with pytest.raises(RunDirectoryError, match="corrupt"):
        psro.PSRO.resume(tmp_path)
    assert checkpoint.read_bytes() == before
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunDirectoryError, match="not a run directory"):
        psro.PSRO.resume(tmp_path / "empty")


def test_a_failing_write_stops_the_run_keeping_the_iterations_before(tmp_path, monkeypatch):
    """A write that fails (a full disk at iteration 3) stops the run, naming the iteration it
    could not write; the directory holds the iterations before it, from which the run resumes
    to the numbers of an uninterrupted run. step() returns with its iteration on disk."""
    import errno

    import psro.storage.checkpoint.writer as writer

    real = writer.atomic_write_bytes

    def disk_full_at_iteration_3(path, write):
        if path.name == "000003.npz":
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, write)

    monkeypatch.setattr(writer, "atomic_write_bytes", disk_full_at_iteration_3)
    run = psro.PSRO("leduc_poker", "exact", "nash", out=tmp_path / "r")
    with pytest.raises(RunDirectoryError, match="cannot write iteration 3 to .*: No space left "
                                                "on device; the files of the iterations "
                                                "before it are kept"):
        run.run(iterations=8)
    monkeypatch.setattr(writer, "atomic_write_bytes", real)
    loaded = psro.load_run(tmp_path / "r")
    assert loaded.iteration == 2 and not loaded.ended
    assert len((tmp_path / "r" / "metrics.jsonl").read_text().splitlines()) == 3
    resumed = psro.PSRO.resume(tmp_path / "r")
    resumed.run(iterations=8)
    assert numbers(resumed.metrics) == numbers(psro.PSRO("leduc_poker", "exact",
                                                         "nash").run(iterations=8))
    stepped = psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path / "s")
    stepped.step()
    stepped.step()
    assert psro.load_run(tmp_path / "s").iteration == 1


@pytest.mark.slow
def test_kill_9_at_any_moment_resumes_to_the_samenumbers(tmp_path):
    """A real SIGKILL while the run writes: whatever it leaves, the resume ends with the
    numbers of an uninterrupted run."""
    import os
    import signal
    import subprocess
    import sys
    import time

    full = psro.PSRO("leduc_poker", "exact", "nash").run(iterations=200)
    out = tmp_path / "killed"
    for delay in (0.3, 0.7):  # kill twice, at different moments of the writing
        saved = len(list(out.glob("iterations/*.npz")))
        start = ["--resume"] if saved else ["--game", "leduc_poker"]
        proc = subprocess.Popen([sys.executable, "-m", "psro.cli", "run", *start,
                                 "--iterations", "200", "--quiet", "--out", str(out)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while len(list(out.glob("iterations/*.npz"))) <= saved + 2 \
                and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    resumed = psro.PSRO.resume(out)
    assert 0 < resumed.iteration < 200
    resumed.run(iterations=200)
    assert numbers(resumed.metrics) == numbers(full)
    lines = (out / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in lines] == list(range(201))


@pytest.mark.parametrize("call,match", [
    (lambda: psro.PSRO(5), "game must be a non-empty game string; got 5"),
    (lambda: psro.PSRO("kuhn_poker", config={"game": "rps"}), "config must be a RunConfig"),
    (lambda: psro.PSRO("kuhn_poker").run(iterations=2.5),
     "iterations must be a positive integer; got 2.5"),
    (lambda: psro.PSRO("kuhn_poker").run(time_budget_s=-1),
     "time_budget_s must be a positive number; got -1"),
    (lambda: psro.PSRO("kuhn_poker").run(target_exploitability="abc"),
     "target_exploitability must be a positive number"),
    (lambda: psro.PSRO("kuhn_poker", iterations=True), "iterations must be a positive integer"),
])
def test_python_api_refuses_bad_arguments_with_the_toolkit_error(call, match):
    with pytest.raises(psro.ConfigError, match=match):
        call()


def test_a_run_changes_its_game_and_measures_every_entry_again(tmp_path):
    """The debate game before a retrained judge: after ``change_game`` every payoff entry is
    the new game's value of its pair of members, as OpenSpiel's ``policy_value`` computes it
    on the new game; the next iteration's best responses are to the new game; a run with a
    directory, or a game its members cannot play, is refused."""
    from games import judge as judges
    from games.digits import digits
    from psro.errors import ConfigError
    from psro.extensive_form.policies import MetaPolicy

    tiny = "debate(images=10,size=4,reveals=2)"
    images, labels = digits("judge", 4)
    mask = judges.random_reveals(images, 2, np.random.default_rng(0))
    threes = judges.retrain(judges.judge(4, 2, 0), mask, images, np.full(len(labels), 3),
                            seed=0)
    path = judges.save(threes, tmp_path / "j.npz")
    changed = f"debate(images=10,size=4,reveals=2,judge_file={path})"
    run = psro.PSRO(tiny, "exact", "nash")
    run.run(iterations=2)
    before = [v.copy() for v in run.table.as_game()]
    run.change_game(changed)
    after = run.table.as_game()
    assert not np.allclose(before[0], after[0])
    game = pyspiel.load_game(changed)
    sizes = run.state.sizes
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            policy = MetaPolicy(run.tree, run.population, [np.eye(sizes[0])[i],
                                                           np.eye(sizes[1])[j]])
            value = expected_game_score.policy_value(game.new_initial_state(), [policy] * 2)
            assert after[0][i, j] == pytest.approx(value[0], abs=1e-12)
    rows = run.run(iterations=8)
    assert rows[-1]["exploitability"] < 1e-9  # the new game's equilibrium, exactly
    theirs = exploitability.nash_conv(game, run.meta_policy())
    assert theirs == pytest.approx(rows[-1]["nash_conv"], abs=1e-12)
    with pytest.raises(ConfigError, match="information sets differ"):
        run.change_game("debate(images=10,size=4,reveals=3)")
    with pytest.raises(ConfigError, match="distinct actions differ"):
        run.change_game("debate(images=10,size=8,reveals=2)")
    saved = psro.PSRO(tiny, "exact", "nash", out=tmp_path / "run")
    saved.run(iterations=1)
    with pytest.raises(ConfigError, match="saved to a directory"):
        saved.change_game(changed)
