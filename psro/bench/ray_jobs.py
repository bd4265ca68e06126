"""A suite's jobs as tasks of a Ray cluster (``psro bench --backend ray --jobs N``): up to N
runs at once, wherever the cluster has room, each in a Ray task that reserves its CPUs on one
node (``--workers``, default 1) and runs the run's own tasks there, beside it (on that many
worker processes; one: in the task's process). The PPO oracle trains on CPUs: no run asks for
a GPU.

Files: the nodes need not share a file system with the driver. The suite's folder stays on the
driver, kept by a Ray actor on the driver's node (:class:`psro.bench.folder_sync.FolderKeeper`):
a task copies its run's files into a temporary folder of its node, runs there, and sends the
changed files back after each iteration (its checkpoint) and at its end
(:class:`psro.bench.folder_sync.FolderCopy`).

Faults: a node lost mid-run (its worker processes killed, the node stopped) fails the task,
and Ray runs it again elsewhere, up to ``MAX_RETRIES`` times: the new task copies the run as
the driver last received it and resumes from that checkpoint, so the run ends with the
numbers of an undisturbed one. A killed driver stops the suite; the same command resumes it.
An error of the run itself is not retried: it stops the suite (a meta-solver error is
recorded and the suite goes on, as everywhere).
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from psro.backends.ray import check_ray
from psro.bench.folder_sync import FolderCopy, FolderKeeper
from psro.bench.job_checks import check_job_count, check_writable
from psro.bench.jobs import Job, JobResult, execute
from psro.errors import ConfigError, ToolkitError

MAX_RETRIES = 3
"""Times a run's task is run again after its node or worker process is lost."""
POLL_S = 1.0
"""How often the driver looks for jobs that started."""


class RayJobs:
    """Dispatches a suite's jobs to Ray (see the module docstring): ``jobs`` at once (``auto``:
    as many as the cluster has room for), each reserving ``cpus`` CPUs (None: 1);
    ``address``: the cluster (None: a private Ray on this machine)."""

    def __init__(self, jobs: int | str, cpus: int | None, address: str | None):
        self.requested, self.cpus, self.address = jobs, cpus or 1, address
        self.jobs = 1 if jobs == "auto" else int(jobs)
        self.backend = None

    def run_settings(self, settings: dict) -> dict:
        """Each run's own tasks run beside it: on ``cpus`` worker processes of its node."""
        if self.cpus == 1:
            return {"backend": "local"}
        return {"backend": "processes", "workers": self.cpus}

    def _connect(self):
        from psro.backends.ray import RayBackend

        if self.backend is None:
            self.backend = RayBackend(None, self.address)
            self.backend.start()
        import ray

        return ray

    def check(self, jobs: list[Job], out: Path) -> None:
        """Refuses a cluster without a node of ``cpus`` CPUs (joining it to see; a private Ray
        is not started yet), more jobs than runs, and a suite folder the driver cannot
        write."""
        check_writable(out)
        if self.address is None:  # the private Ray, started with one CPU per core
            check_ray(None)
            per_node = [os.cpu_count() or 1]
        else:
            ray = self._connect()
            per_node = [int(n.get("Resources", {}).get("CPU", 0)) for n in ray.nodes()
                        if n.get("Alive")]
        if not per_node or max(per_node) < self.cpus:
            self.close()
            raise ConfigError(f"the Ray cluster has no node with {self.cpus} CPU(s) for a run "
                              f"(its nodes have {', '.join(map(str, per_node)) or 'none'}); "
                              f"give --workers at most {max(per_node, default=0)}")
        runs = sum(job.run is not None for job in jobs)
        if self.requested == "auto":
            self.jobs = max(1, min(runs, sum(c // self.cpus for c in per_node)))
        try:
            check_job_count(self.jobs, runs)
        except ConfigError:
            self.close()
            raise

    def run(self, jobs: list[Job], out: Path) -> Iterator[tuple[str, Job, JobResult | str]]:
        """Keep up to ``jobs`` tasks submitted; yields their starts and results."""
        ray = self._connect()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                              soft=False)
        keeper = ray.remote(FolderKeeper).options(num_cpus=0, scheduling_strategy=here) \
            .remote(str(Path(out).resolve()))
        task = ray.remote(_job_task).options(num_cpus=self.cpus, max_retries=MAX_RETRIES,
                                             retry_exceptions=False)
        pending, submitted = deque(enumerate(jobs)), {}
        try:
            while pending or submitted:
                while pending and len(submitted) < self.jobs:
                    k, job = pending.popleft()
                    submitted[task.remote(keeper, pickle.dumps(job), str(out), k)] = job
                ready, _ = ray.wait(list(submitted), num_returns=1, timeout=POLL_S)
                for k, where in ray.get(keeper.take_events.remote()):
                    yield "started", jobs[k], where
                for ref in ready:
                    yield "finished", submitted.pop(ref), _result(ray, ref)
        finally:
            for ref in submitted:
                ray.cancel(ref, force=True)
            ray.kill(keeper)
            self.close()

    def close(self) -> None:
        """Leave the cluster (shut down the Ray this dispatcher started)."""
        if self.backend is not None:
            self.backend.close()
            self.backend = None


def _result(ray, ref) -> JobResult:
    """A task's result; its run's own error raised here as its type."""
    try:
        return pickle.loads(ray.get(ref))
    except ray.exceptions.RayTaskError as err:
        if isinstance(err.cause, ToolkitError):
            raise err.cause from None
        raise err.as_instanceof_cause() from None


def _job_task(keeper, blob: bytes, out: str, position: int) -> bytes:
    """A Ray task: run the job in a temporary folder of this node, its files copied from and
    back to the suite's folder (see the module docstring)."""
    import ray

    job: Job = pickle.loads(blob)
    context = ray.get_runtime_context()
    node = next((n for n in ray.nodes() if n["NodeID"] == context.get_node_id()), {})
    keeper.started.remote(position, f"node {node.get('NodeManagerAddress', '?')} "
                                    f"({context.get_node_id()[:8]}, pid {os.getpid()})")
    with tempfile.TemporaryDirectory(prefix="psro-suite-job-") as tmp:
        paths = [str(p) for p in job.paths(Path(out))]
        copy = FolderCopy(Path(tmp), paths, keeper, lambda f, *a: ray.get(f.remote(*a)))
        copy.fill()
        result = execute(job.moved(Path(out), Path(tmp)),
                         callbacks=(lambda run, row: copy.send(),))
        copy.send()
    return pickle.dumps(result)
