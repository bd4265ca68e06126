"""Backends: the process pool returns what the local backend returns, raises task errors, and
does not leak file descriptors when tasks return torch networks."""

import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from conftest import as_written_before_config_digests, blas_threads

import psro
from psro.backends import LocalBackend, ProcessBackend, Task, check_backend, make_backend
from psro.errors import ConfigError
from psro.rl.networks import ActorCritic


@pytest.fixture(scope="module")
def pool():
    backend = ProcessBackend(workers=2)
    yield backend
    backend.close()


def test_processes_return_what_local_returns_in_task_order(pool):
    tasks = [(np.arange(n),) for n in range(1, 7)]
    local = LocalBackend().run([Task(np.cumsum, a) for a in tasks])
    remote = pool.run([Task(np.cumsum, a) for a in tasks])
    assert len(remote) == 6
    for a, b in zip(local, remote, strict=True):
        np.testing.assert_array_equal(a, b)


def test_workers_run_blas_on_one_thread(pool):
    """Two workers on the machine's cores: each worker's BLAS libraries have one thread, so
    that the workers' threads do not spin against each other (psro.backends.threads)."""
    counts = pool.run([Task(blas_threads, ()) for _ in range(4)])
    assert all(c and set(c) == {1} for c in counts)


def test_task_errors_are_raised_by_map(pool):
    with pytest.raises(ValueError, match="invalid literal"):
        pool.run([Task(int, ("1",)), Task(int, ("not a number",))])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/fd")
def test_returned_networks_hold_no_file_descriptors(pool):
    pool.run([Task(ActorCritic, (4, 2))] * 2)  # workers started
    before = len(os.listdir("/proc/self/fd"))
    networks = pool.run([Task(ActorCritic, (30, 3, (16,)))] * 40)  # 480 tensors, all kept alive
    after = len(os.listdir("/proc/self/fd"))
    assert len(networks) == 40 and after - before < 10


@pytest.mark.parametrize("build", [make_backend, check_backend])
def test_unknown_backend_and_bad_worker_counts(build):
    with pytest.raises(ConfigError, match="unknown backend 'rays'; accepted: local, processes, "
                                          "ray"):
        build("rays")
    with pytest.raises(ConfigError, match="needs --backend ray"):
        build("processes", 2, "auto")
    for workers in (-1, 0, 2.5, True):
        with pytest.raises(ConfigError, match="workers must be a positive integer"):
            build("processes", workers)
    with pytest.raises(ConfigError, match="workers must be at most"):
        build("processes", 4 * (os.cpu_count() or 1) + 1)
    # local runs one task at a time (its declared max_workers): more were ignored, now refused
    with pytest.raises(psro.UnreadSettingError, match="workers 2 has no effect with backend "
                                                      "'local'") as err:
        build("local", 2)
    assert err.value.setting == "workers"


def test_a_run_written_with_more_local_workers_than_local_runs_still_resumes(tmp_path):
    """Earlier versions wrote ``backend = "local", workers = 2`` and ran one task at a time;
    such a run resumes (its workers setting reset) with the numbers it would have had."""
    import json

    whole = psro.PSRO("kuhn_poker", "exact", "nash")
    whole.run(iterations=3)
    psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path / "r").run(iterations=1)
    as_written_before_config_digests(tmp_path / "r")
    config = tmp_path / "r" / "config.json"
    config.write_text(json.dumps({**json.loads(config.read_text()), "workers": 2}))
    resumed = psro.PSRO.resume(tmp_path / "r")
    resumed.run(iterations=3)
    assert resumed.backend.workers == 1
    assert [r["exploitability"] for r in resumed.metrics] == \
        [r["exploitability"] for r in whole.metrics]


def test_check_backend_refuses_a_ray_address_it_cannot_reach_without_starting_ray():
    with pytest.raises(ConfigError, match="must be auto or HOST:PORT; got 'nohost'"):
        check_backend("ray", None, "nohost")
    with socket.socket() as closed:  # a port nothing listens on: bound, never listening
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        with pytest.raises(ConfigError, match="cannot reach a Ray cluster"):
            check_backend("ray", None, f"127.0.0.1:{port}")
    check_backend("local", 1)
    check_backend("processes", None)


def _die_once(marker: str, value: int) -> int:
    """Kill this worker process the first time it is called with ``marker`` absent."""
    if not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(9)
    return value * 2


def test_a_killed_worker_is_replaced_and_its_task_run_again(tmp_path):
    backend = ProcessBackend(workers=2)
    try:
        tasks = [Task(_die_once, (str(tmp_path / "died"), k)) for k in range(4)]
        assert backend.run(tasks) == [0, 2, 4, 6]
    finally:
        backend.close()


def test_start_spawns_every_worker_before_the_first_task():
    backend = ProcessBackend(workers=2)
    try:
        backend.start()
        assert len(backend._pool._processes) == 2  # both started (and warmed up) already
        assert backend.run([Task(abs, (-k,)) for k in range(3)]) == [0, 1, 2]
    finally:
        backend.close()


def test_a_script_without_the_main_guard_gets_a_backend_error_naming_the_guard(tmp_path):
    """Each spawned worker imports the main script again; without ``if __name__ ==
    "__main__":`` that import starts a run of its own and the worker dies as it starts. The
    script's run then ends in a ``BackendError`` that names the guard (it ended in
    ``BrokenProcessPool``, 'terminated abruptly') before its run directory is made."""
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import psro\n"
        "psro.PSRO('kuhn_poker', 'ppo', ppo={'env_steps': 512, 'num_envs': 8, "
        "'steps_per_update': 256}, backend='processes', workers=2, out='run').run(iterations=1)\n")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1
    # the traceback's last line; multiprocessing's resource tracker may warn after it (on a
    # loaded machine a dying worker got as far as making its own pool's semaphores)
    raised = [line for line in done.stderr.splitlines() if line.startswith("psro.errors.")]
    assert raised and raised[-1].startswith("psro.errors.BackendError: backend 'processes': "
                                            "its worker processes died as they started"), \
        done.stderr[-2000:]
    assert 'if __name__ == "__main__":' in raised[-1]
    assert "Traceback" not in done.stderr.rpartition(raised[-1])[2]  # nothing raised after it
    assert not (tmp_path / "run").exists()
