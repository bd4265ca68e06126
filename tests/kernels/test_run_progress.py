"""A run's final exact evaluation (a compiled kernel's, on a game too large to walk) keeps its
progress in the run directory: a run stopped in it resumes it there without asking a member
again, and ``psro exploitability --run`` of the same iteration continues the same file. The
reference is the same run left uninterrupted (runs are deterministic)."""

import os

import numpy as np
import pytest

import psro
import psro.kernels.liars_dice_exact as liars
from psro.cli import main
from psro.kernels.progress import RUN_PROGRESS_FILE
from psro.storage.checkpoint.writer import foreign_run_entries

SPEC = "liars_dice(numdice=1,dice_sides=4)"
SETTINGS = {"oracle": "ppo", "max_nodes": 10, "iterations": 2, "seed": 3,
            "ppo": {"env_steps": 1500, "num_envs": 16},
            "monte_carlo": {"min_episodes": 64, "max_episodes": 128, "tolerance": 0.5}}


class Interrupted(Exception):
    """Stands for the process being stopped in the walk that follows the members' sums."""


def _stopped(*args, **kwargs):
    raise Interrupted


@pytest.fixture()
def counted(monkeypatch):
    """The batches of information sets the kernel asks members at, counted."""
    asked = []
    original = liars.batch_probs

    def counting(policy, batch):
        asked.append(policy)
        return original(policy, batch)

    monkeypatch.setattr(liars, "batch_probs", counting)
    return asked


def test_a_run_stopped_in_its_final_exact_evaluation_continues_it(tmp_path, monkeypatch,
                                                                  counted):
    reference = psro.PSRO(SPEC, out=tmp_path / "whole", **SETTINGS).run()[-1]
    assert reference["exploitability_kind"] == "exact"
    walk = liars._best_response
    monkeypatch.setattr(liars, "_best_response", _stopped)
    with pytest.raises(Interrupted):
        psro.PSRO(SPEC, out=tmp_path / "stopped", **SETTINGS).run()
    progress = tmp_path / "stopped" / RUN_PROGRESS_FILE
    assert progress.is_file()
    assert foreign_run_entries(tmp_path / "stopped") == []  # a run's file: --overwrite takes it
    assert psro.load_run(tmp_path / "stopped").metrics[-1]["exploitability"] is None
    monkeypatch.setattr(liars, "_best_response", walk)
    assert counted  # the counter sees the members asked
    counted.clear()
    row = psro.PSRO.resume(tmp_path / "stopped").run()[-1]
    assert counted == []  # every member's sum was saved: none is asked again
    assert not progress.exists()
    for key in ("exploitability", "nash_conv", "gain_p0", "gain_p1", "value_p0"):
        assert row[key] == reference[key]  # bit for bit
    assert psro.load_run(tmp_path / "stopped").metrics[-1]["exploitability"] == \
        reference["exploitability"]


def test_psro_exploitability_continues_a_runs_stopped_evaluation(tmp_path, monkeypatch,
                                                                 counted, capsys):
    """The run's own evaluation stopped; the command continues its file, and a command
    stopped in turn is continued by the next one; a directory it cannot write keeps none."""
    run_dir = tmp_path / "run"
    reference = psro.PSRO(SPEC, out=run_dir, **SETTINGS).run()[-1]
    walk = liars._best_response
    monkeypatch.setattr(liars, "_best_response", _stopped)
    with pytest.raises(Interrupted):
        main(["exploitability", "--run", str(run_dir), "--max-nodes", "10"])
    assert "its progress kept in" in capsys.readouterr().err
    assert (run_dir / RUN_PROGRESS_FILE).is_file()
    monkeypatch.setattr(liars, "_best_response", walk)
    counted.clear()
    assert main(["exploitability", "--run", str(run_dir), "--max-nodes", "10"]) == 0
    assert counted == []
    assert not (run_dir / RUN_PROGRESS_FILE).exists()
    out = capsys.readouterr().out
    assert f"exploitability {reference['exploitability']:.9g}" in out
    assert "exact (compiled kernel" in out
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # a folder it cannot write
    assert main(["exploitability", "--run", str(run_dir), "--max-nodes", "10"]) == 0
    assert "progress kept" not in capsys.readouterr().err
    assert not (run_dir / RUN_PROGRESS_FILE).exists()


def test_the_key_names_the_iteration_and_the_weights(tmp_path):
    from psro.kernels.progress import run_progress

    weights = [np.array([0.25, 0.75]), np.array([1.0, 0.0])]
    first = run_progress(tmp_path, 4, weights)
    assert first.path == tmp_path / RUN_PROGRESS_FILE
    assert run_progress(tmp_path, 4, [w.copy() for w in weights]).key == first.key
    assert run_progress(tmp_path, 5, weights).key != first.key
    moved = [np.array([0.25, 0.75 + 1e-16 * 4]), weights[1]]
    assert run_progress(tmp_path, 4, moved).key != first.key
    assert run_progress(None, 4, weights) is None


def test_progress_is_refused_where_no_kernel_reads_it():
    from psro.kernels.progress import MixtureProgress

    progress = MixtureProgress("unused.npz", "key")
    with pytest.raises(psro.UnreadSettingError, match="the game is walked"):
        psro.exploitability("kuhn_poker", {}, progress=progress)
