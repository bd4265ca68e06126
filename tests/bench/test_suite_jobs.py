"""``psro bench --jobs N``: a suite's runs at once, in worker processes on this machine and as
Ray tasks (a two-node cluster that loses a node mid-run), give every run the numbers of the
suite run one at a time; Ctrl-C stops every run with its iterations saved, and
the same command resumes; bad input is refused before anything is written."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from conftest import interruptible
from test_bench import _suite

import psro
from psro.bench import Suite, run_suite
from psro.bench.local_jobs import core_sets
from psro.cli import main
from psro.storage.text_files import read_json

ROOT = Path(__file__).resolve().parents[2]
RUNS = ["kuhn/psro/seed-0", "kuhn/xdo/seed-0", "kuhn-sampled/psro/seed-0",
        "kuhn-sampled/self-play/seed-0", "kuhn-sampled/psro/seed-1",
        "kuhn-sampled/self-play/seed-1"]


class _Close(float):
    """A float equal to those within 1e-12 of it (relative)."""

    def __eq__(self, other):
        return other is not None and math.isclose(self, other, rel_tol=1e-12)

    __hash__ = float.__hash__


def _numbers(row: dict) -> dict:
    """A metrics row without its clocks (``*_s``), its population diversity compared to 1e-12:
    an eigenvalue sum by BLAS, whose last bits follow BLAS's thread count (a Ray worker has one
    thread, this process one per core)."""
    return {k: _Close(v) if k.startswith("diversity_") and v is not None else v
            for k, v in row.items() if not k.endswith("_s")}


def assert_same_numbers(one: Path, other: Path, runs: list[str] = RUNS) -> None:
    """Every run of the tiny suite holds the same numbers in both folders: the rows of the
    env-step-budgeted runs whole, those of the time-budgeted (walkable) runs as far as both
    went; the same shared bounds and head-to-head scores."""
    for name in runs:
        a, b = psro.load_run(one / name).metrics, psro.load_run(other / name).metrics
        if name.startswith("kuhn/"):  # a time budget: the same iterations, as far as both go
            a, b = a[:min(len(a), len(b))], b[:min(len(a), len(b))]
        assert [_numbers(r) for r in a] == [_numbers(r) for r in b], name
        if name.startswith("kuhn-sampled"):
            bound = [read_json(f / f"{name}.bound.json") for f in (one, other)]
            assert bound[0]["exploitability"] == bound[1]["exploitability"]
            np.testing.assert_equal(bound[0]["curves"], bound[1]["curves"])
    pairs = [read_json(f / "kuhn-sampled" / "head_to_head.json")["pairs"] for f in (one, other)]
    assert pairs[0] == pairs[1]


def _cluster_suite(env_steps: int) -> Suite:
    """The tiny suite with one method a game and two seeds: an exact run (deterministic: one
    seed) with its reference lines, and two PPO runs of ``env_steps`` (their time budget far
    above what they take even on a loaded machine, so that the env steps end them and their
    rows compare whole)."""
    walkable, large = _suite(large_steps=env_steps).games
    return Suite("cluster", (replace(walkable, methods=walkable.methods[:1]),
                             replace(large, methods=large.methods[:1], time_budget_s=3600)),
                 seeds=(0, 1))


@pytest.fixture(scope="module")
def one_at_a_time(tmp_path_factory):
    out = tmp_path_factory.mktemp("sequential")
    run_suite(_suite(), out, quiet=True)
    return out


def test_core_sets_split_the_cpus_into_disjoint_even_sets():
    assert core_sets([0, 1], 2) == [(0,), (1,)]
    assert core_sets([0, 1, 2, 3, 4], 2) == [(0, 1, 2), (3, 4)]
    assert core_sets(list(range(16)), 3) == [tuple(range(6)), tuple(range(6, 11)),
                                             tuple(range(11, 16))]


@pytest.mark.slow
def test_two_runs_at_once_give_the_numbers_of_one_at_a_time(one_at_a_time, tmp_path):
    import io

    stream = io.StringIO()
    run_suite(_suite(), tmp_path, stream=stream, jobs=2)
    assert_same_numbers(one_at_a_time, tmp_path)
    lines = stream.getvalue().splitlines()
    started = [line for line in lines if ": started on core" in line]
    assert len(started) == 6 and {"core 0", "core 1"} <= {
        line.split(" on ")[1].split("  ")[0] for line in started}
    assert any("running 2," in line for line in started)  # two at once
    assert any("reference lines of Kuhn" in line for line in lines)
    assert (tmp_path / "kuhn" / "reference.json").exists()
    again = io.StringIO()  # a second call: every run ended, read in this process
    run_suite(_suite(), tmp_path, stream=again, jobs=2)
    assert again.getvalue().count("(finished earlier)") == 6
    assert "started on core" not in again.getvalue()
    bound = tmp_path / "kuhn-sampled" / "psro" / "seed-1.bound.json"
    measured = read_json(bound)["exploitability"]
    bound.unlink()  # ended before its measurement was written: measured on a core, not here
    third = io.StringIO()
    run_suite(_suite(), tmp_path, stream=third, jobs=2)
    started = [line for line in third.getvalue().splitlines() if "started on core" in line]
    assert len(started) == 1 and "psro · seed 1" in started[0]
    assert third.getvalue().count("(finished earlier)") == 6  # no run trains again
    assert read_json(bound)["exploitability"] == measured


CLUSTER_SCRIPT = textwrap.dedent("""
    import io, sys, threading, time
    from pathlib import Path
    sys.path[:0] = ["tests", "tests/bench"]
    import ray
    from ray.cluster_utils import Cluster
    from test_suite_jobs import _cluster_suite
    from psro.bench import run_suite

    if __name__ == "__main__":
        out = Path(sys.argv[1])
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        workers = [cluster.add_node(num_cpus=1) for _ in range(2)]
        cluster.wait_for_nodes()
        stream = io.StringIO()
        suite = _cluster_suite(6000)
        done = []
        thread = threading.Thread(target=lambda: done.append(run_suite(
            suite, out, {"backend": "ray", "ray_address": cluster.address}, stream=stream,
            jobs=2)))
        thread.start()
        first = out / "kuhn-sampled" / "psro" / "seed-0" / "iterations" / "000002.npz"
        while not first.exists() and thread.is_alive():  # the run is two iterations in
            time.sleep(0.05)
        line = next(l for l in stream.getvalue().splitlines()
                    if "Kuhn sampled · psro · seed 0: started on node" in l)
        lost = next(n for n in workers if n.node_id.startswith(line.split("(")[1][:8]))
        cluster.remove_node(lost)
        print("removed", lost.node_id[:8], flush=True)
        thread.join()
        print(stream.getvalue())
        print("suite ended:", bool(done))
        ray.shutdown()
        cluster.shutdown()
""")


@pytest.mark.slow
def test_a_node_lost_mid_run_resumes_the_run_elsewhere_with_the_same_numbers(tmp_path):
    """A two-node cluster on this machine (``ray.cluster_utils.Cluster``) runs an exact run
    with its reference lines and two PPO runs; the node running a PPO run is removed once the
    run has saved two iterations; the run resumes on the other node from the checkpoint the
    driver received, and every run ends with the numbers of the suite run one at a time in
    this process."""
    result = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, str(tmp_path / "cluster")],
                            cwd=ROOT, capture_output=True, text=True, timeout=480)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "suite ended: True" in result.stdout
    removed = result.stdout.split("removed ")[1][:8]
    starts = [line for line in result.stdout.splitlines()
              if "Kuhn sampled · psro · seed 0: started" in line]
    assert len(starts) == 2 and removed in starts[0] and removed not in starts[1]
    assert "started again on node" in starts[1] and "from its last saved iteration" in starts[1]
    sequential = tmp_path / "sequential"
    run_suite(_cluster_suite(6000), sequential, quiet=True)
    assert_same_numbers(sequential, tmp_path / "cluster", ["kuhn/psro/seed-0",
                        "kuhn-sampled/psro/seed-0", "kuhn-sampled/psro/seed-1"])
    assert (tmp_path / "cluster" / "kuhn" / "reference.json").exists()  # a job on Ray too
    assert not list((tmp_path / "cluster").rglob(".lock"))  # the copies' locks stay there


@pytest.mark.slow
def test_ctrl_c_stops_every_run_with_its_iterations_saved_and_the_command_resumes(tmp_path):
    """Ctrl-C (SIGINT to the command's process group, as a terminal sends it) while two runs
    are running: the command exits with 130 at once, no worker process is left, and the same
    command finishes the suite with the numbers of one at a time."""
    suite = tmp_path / "suite.toml"
    suite.write_text(textwrap.dedent("""
        name = "stopped"
        seeds = [0, 1]
        [[games]]
        game = "kuhn_poker"
        label = "Kuhn sampled"
        tier = "large"
        time_budget_s = 600
        env_steps = 9000
        response_steps = 600
        thresholds = []
        [[games.methods]]
        label = "psro"
        settings = {oracle = "ppo", max_nodes = 50, meta_solver = "nash", %s}
        """) % 'ppo = {env_steps = 600}, monte_carlo = {min_episodes = 64, max_episodes = 128, '
             'tolerance = 0.5}')
    out = tmp_path / "out"
    command = [sys.executable, "-m", "psro.cli", "bench", str(suite), "--out", str(out),
               "--jobs", "2"]
    process = subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                               preexec_fn=interruptible,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    records = [out / "kuhn-sampled" / "psro" / f"seed-{s}" / "iterations" / "000002.npz"
               for s in (0, 1)]
    while not all(r.exists() for r in records) and process.poll() is None:
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr[-2000:]
    deadline = time.monotonic() + 30  # the resource tracker ends when it sees its pipe close
    while _alive_in_group(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive_in_group(process.pid)
    done = [(out / "kuhn-sampled" / "psro" / f"seed-{s}.done.json").exists() for s in (0, 1)]
    assert not all(done)  # it stopped a run mid-way (on a busy machine one may have ended)
    assert subprocess.run(command, cwd=ROOT, capture_output=True).returncode == 0
    alone = tmp_path / "alone"  # one at a time, in this process
    assert main(["bench", str(suite), "--out", str(alone)]) == 0
    for seed in (0, 1):
        rows = [psro.load_run(f / "kuhn-sampled" / "psro" / f"seed-{seed}").metrics
                for f in (out, alone)]
        assert [_numbers(r) for r in rows[0]] == [_numbers(r) for r in rows[1]]


def _alive_in_group(group: int) -> list[int]:
    """The processes still running in process group ``group`` (not zombies)."""
    alive = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(stat[2]) == group and stat[0] != "Z":  # fields: state, ppid, pgrp
            alive.append(int(entry.name))
    return alive


@pytest.mark.parametrize("args, said", [
    (["--jobs", "0"], "--jobs must be a positive integer or auto"),
    (["--jobs", "two"], "--jobs must be a positive integer or auto"),
    (["--jobs", "7"], "--jobs 7 is more than"),
    (["--jobs", "2", "--game", "Kuhn"], "--jobs 2 is more than this call's 1 run; give at "
                                        "most 1"),
    (["--jobs", "2", "--backend", "ray", "--workers", "5"],
     "the Ray cluster has no node with 5 CPU(s) for a run"),
])
def test_bad_job_counts_are_one_line_before_anything_is_written(args, said, tmp_path, capsys):
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "two"\nseeds = [0]\n[[games]]\ngame = "kuhn_poker"\n'
                     'label = "Kuhn"\ntier = "walkable"\ntime_budget_s = 1\n'
                     '[[games.methods]]\nlabel = "psro"\nsettings = {oracle = "exact"}\n'
                     '[[games]]\ngame = "leduc_poker"\nlabel = "Leduc"\ntier = "walkable"\n'
                     'time_budget_s = 1\n[[games.methods]]\nlabel = "psro"\n'
                     'settings = {oracle = "exact"}\n')
    try:
        assert main(["bench", str(suite), "--out", str(tmp_path / "out"), *args]) == 2
    finally:
        if "ray" in args:
            import ray

            ray.shutdown()
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err
    assert not (tmp_path / "out").exists()


def test_a_suite_folder_that_cannot_be_written_is_refused_before_any_run(tmp_path, capsys):
    suite = tmp_path / "suite.toml"
    suite.write_text('name = "one"\nseeds = [0, 1]\n[[games]]\ngame = "kuhn_poker"\n'
                     'label = "Kuhn"\ntier = "walkable"\ntime_budget_s = 1\n'
                     '[[games.methods]]\nlabel = "psro"\nsettings = {oracle = "exact"}\n'
                     '[[games.methods]]\nlabel = "xdo"\n'
                     'settings = {oracle = "exact", algorithm = "xdo"}\n')
    assert main(["bench", str(suite), "--out", "/proc/1/suite", "--jobs", "2"]) == 2
    assert "cannot write the suite's folder /proc/1/suite" in capsys.readouterr().err
