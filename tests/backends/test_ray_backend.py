"""The ray backend: the same numbers as local (also when a run resumes on another backend),
a worker killed mid-task is retried, a task's own exception is raised once with its
traceback, tasks land on both nodes of a two-node cluster, Ray missing is one line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
import ray
from conftest import ROOT, numbers

import psro
from psro.backends import Task, make_backend
from psro.cli import main

PPO = {"game": "kuhn_poker", "oracle": "ppo", "meta_solver": "nash", "seed": 4,
       "ppo": {"env_steps": 3000}}


@pytest.fixture(scope="module")
def ray_session():
    """One private Ray for the module (each backend joins it instead of starting its own)."""
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    yield
    ray.shutdown()



def _ray_task_pids() -> list[int]:
    """Ray worker processes that are running a task of this backend right now."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if cmdline.startswith(b"ray::_call"):
                pids.append(int(entry))
    return pids


@pytest.mark.slow
def test_ray_gives_the_numbers_of_local_also_when_resumed_on_it(ray_session, tmp_path):
    expected = psro.PSRO(**PPO).run(iterations=3)
    rows = psro.PSRO(**PPO, backend="ray", workers=2).run(iterations=3)
    assert numbers(rows) == numbers(expected)
    psro.PSRO(**PPO, out=tmp_path / "run").run(iterations=1)
    resumed = psro.PSRO.resume(tmp_path / "run")
    resumed.use_backend("ray", 2)
    assert numbers(resumed.run(iterations=3)) == numbers(expected)


@pytest.mark.slow
def test_a_worker_killed_mid_task_is_retried_and_the_run_ends_the_same(ray_session):
    expected = psro.PSRO(**PPO).run(iterations=2)
    killed: list[int] = []
    done = threading.Event()

    def killer():
        while not done.is_set() and not killed:
            for pid in _ray_task_pids():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                break
            time.sleep(0.02)

    thread = threading.Thread(target=killer)
    thread.start()
    try:
        rows = psro.PSRO(**PPO, backend="ray", workers=2).run(iterations=2)
    finally:
        done.set()
        thread.join()
    assert killed, "no Ray worker was seen running a task"
    assert numbers(rows) == numbers(expected)


def test_a_task_exception_is_raised_once_with_its_traceback(ray_session, tmp_path):
    def _fails_once_counted(counter: str) -> None:  # nested: Ray pickles it by value
        with open(counter, "a") as f:
            f.write("attempt\n")
        raise ValueError("the task's own bug")

    backend = make_backend("ray", 2)
    counter = tmp_path / "attempts"
    with pytest.raises(ValueError, match="the task's own bug") as caught:
        backend.run([Task(_fails_once_counted, (str(counter),))])
    assert "in _fails_once_counted" in str(caught.value)  # the worker's traceback
    assert counter.read_text().count("attempt") == 1  # not retried


@pytest.mark.slow
def test_tasks_land_on_both_nodes_of_a_two_node_cluster():
    """A cluster of two nodes on this machine (``ray.cluster_utils.Cluster``), joined by
    address, in a fresh interpreter (a driver joins one Ray only)."""
    script = textwrap.dedent("""
        import time
        import ray
        from ray.cluster_utils import Cluster
        from psro.backends import Task, make_backend

        def node(seconds):
            time.sleep(seconds)
            return ray.get_runtime_context().get_node_id()

        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
        cluster.add_node(num_cpus=1)
        cluster.wait_for_nodes()
        backend = make_backend("ray", None, cluster.address)
        print(backend.where())
        nodes = backend.run([Task(node, (1.0,)) for _ in range(4)])
        print("nodes used:", len(set(nodes)))
        backend.close()
        ray.shutdown()
        cluster.shutdown()
    """)
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                            text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "2 node(s), 2 CPU(s)" in result.stdout
    assert "nodes used: 2" in result.stdout


def test_ray_missing_is_one_line_naming_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--game", "kuhn_poker", "--backend", "ray", "--out", "X"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ['psro run: error: backend "ray" needs Ray: pip install -e ".[ray]" (the ray '
                   'extra)']
    assert not (tmp_path / "X").exists()
