"""Errors: every refusal derives from ToolkitError, bugs keep their traceback, a failed
meta-solve is a MetaSolverError, a solver failure in psro solve is one line."""

import pytest

import psro
import psro.loop
import psro.reports
from psro.cli import main


# -- errors ---------------------------------------------------------------------------------
def test_toolkit_errors_share_one_base_and_bugs_keep_their_traceback(tmp_path, capsys,
                                                                     monkeypatch):
    import games
    import solvers

    for error in (psro.ConfigError, psro.RunDirectoryError, psro.MetaSolverError,
                  psro.GameTooLargeError, games.GameError, solvers.PayoffError,
                  solvers.SolverError, solvers.OptionError, psro.BackendError):
        assert issubclass(error, psro.ToolkitError)
    assert not issubclass(psro.MetaSolverError, psro.ConfigError)

    def bug(*args, **kwargs):
        raise ValueError("a bug, not an input")

    monkeypatch.setattr(psro.loop.PSRO, "run", bug)
    with pytest.raises(ValueError, match="a bug"):
        main(["run", "--game", "kuhn_poker", "--out", str(tmp_path / "x")])


def test_meta_solver_failure_is_a_meta_solver_error(monkeypatch):
    import solvers

    run = psro.PSRO("kuhn_poker", "exact", "nash")
    run.run(iterations=1)

    def failing(payoffs):
        raise solvers.SolverError("HiGHS could not solve the zero-sum LP")

    run.parts.algorithm.meta_solver = failing  # the algorithm calls the meta-solver
    with pytest.raises(psro.MetaSolverError, match="failed at iteration 2: HiGHS"):
        run.step()


def test_solve_reports_a_solver_failure_in_one_line(tmp_path, capsys, monkeypatch):
    import solvers

    def failing(payoffs, method="auto"):
        raise solvers.SolverError("Lemke-Howson did not finish within 5 pivots")

    monkeypatch.setattr(solvers.registry, "nash", failing)
    (tmp_path / "g.csv").write_text("1,0\n0,1\n")
    assert main(["solve", str(tmp_path / "g.csv")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not finish within 5 pivots" in err[0]




# -- the Python interface's bad input -------------------------------------------------------
def test_python_bad_input_is_a_toolkit_error_before_any_work(tmp_path, monkeypatch):
    """Mistakes a script makes: each is a ToolkitError naming what is accepted, and nothing
    is written (``out=""`` once named the working directory, as ``Path("")`` is ``.``)."""
    import games

    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    with pytest.raises(psro.RunDirectoryError, match="must be named"):
        psro.PSRO("kuhn_poker", out="", overwrite=True)
    with pytest.raises(psro.ConfigError, match="callbacks must be a list or tuple of functions"):
        psro.PSRO("kuhn_poker", out=tmp_path / "run", callbacks=(print, 5))
    with pytest.raises(psro.ConfigError, match="callbacks must be a list or tuple"):
        psro.PSRO("kuhn_poker", callbacks=print)
    with pytest.raises(games.GameError, match="game must be a game string"):
        psro.exploitability(3, {})
    with pytest.raises(psro.ConfigError, match="max_nodes must be a positive integer"):
        psro.exploitability("kuhn_poker", {}, max_nodes=0)
    for setting in ("ppo", "monte_carlo", "seed"):  # set the lower bound; Kuhn is walked
        with pytest.raises(psro.UnreadSettingError, match=f"{setting} sets the PPO lower") as err:
            psro.exploitability("kuhn_poker", {}, **{setting: {} if setting != "seed" else 0})
        assert err.value.setting == setting
    with pytest.raises(psro.RunDirectoryError, match="must be named"):
        psro.reports.write_report([str(tmp_path / "missing")], "")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_a_path_that_is_not_one_is_a_run_directory_error(tmp_path, monkeypatch):
    """``out=5`` or ``load_run(5)`` was a TypeError from pathlib; a single run directory given
    to ``write_report`` as a string was read one character at a time."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(psro.RunDirectoryError, match="the run directory must be a path"):
        psro.PSRO("kuhn_poker", out=5)
    with pytest.raises(psro.RunDirectoryError, match="got int"):
        psro.load_run(5)
    with pytest.raises(psro.RunDirectoryError, match="got NoneType"):
        psro.PSRO.resume(None)
    with pytest.raises(psro.RunDirectoryError, match="a run directory must be a path"):
        psro.reports.write_report([5], "report")
    with pytest.raises(psro.RunDirectoryError, match="output folder must be a path"):
        psro.reports.write_report(["run"], 5)
    assert list(tmp_path.iterdir()) == []
    psro.PSRO("kuhn_poker", out="run").run(iterations=2)
    md, _ = psro.reports.write_report("run", "report")
    assert "kuhn_poker" in md.read_text()


def test_a_limit_the_run_cannot_reach_is_refused_not_run_forever(tmp_path, capsys):
    """``run(env_step_budget=...)`` with the exact oracle (no environment steps) and
    ``run(target_exploitability=...)`` where exploitability is sampled ran until killed: the
    checks of a new run's config did not see limits given at run time, nor
    ``psro run --resume --env-step-budget`` (613 iterations of exact Kuhn in 28 s before its
    timeout)."""
    exact = psro.PSRO("kuhn_poker", out=tmp_path / "exact")
    with pytest.raises(psro.ConfigError, match="env_step_budget has no effect in this run: "
                                               "oracle 'exact' takes no environment steps"):
        exact.run(env_step_budget=10)
    exact.run(iterations=1)
    assert main(["run", "--out", str(tmp_path / "exact"), "--resume",
                 "--env-step-budget", "10"]) == 2
    assert "env_step_budget has no effect" in capsys.readouterr().err
    assert psro.load_run(tmp_path / "exact").iteration == 1
    sampled = psro.PSRO("leduc_poker", "ppo", max_nodes=100, ppo={"env_steps": 2000})
    with pytest.raises(psro.ConfigError, match="target_exploitability needs exact "
                                               "exploitability"):
        sampled.run(target_exploitability=0.1)
    assert sampled.state.iteration < 0  # nothing ran
    with pytest.raises(psro.ConfigError, match="target_exploitability needs exact"):
        psro.PSRO("leduc_poker", "ppo", max_nodes=100, target_exploitability=0.1)
