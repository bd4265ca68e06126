"""Benchmark: a suite's runs one at a time against several at once (``psro bench --jobs``), on
this machine and on a two-node Ray cluster that loses a node mid-suite, side by side in one
command; and what running at once does to a time-budgeted result.

Run: ``python experiments/bench_suite_jobs.py [--out runs/bench-suite-jobs] [--parts
ceiling,throughput,cluster,time-budget]``.

- ``ceiling``: what the machine gives two processes at once: one PPO iteration alone on a
  core, then two copies at once on two cores (2 x alone / together: at most 2; shared or
  hyperthreaded cores give less), the bound on any two-at-once speed-up.
- ``throughput``: the suite ``experiments/suites/jobs_throughput.toml`` (eight PPO runs with
  env-step budgets, each with a final lower bound), by the ``psro bench`` command, one at a
  time (``--backend local``; and ``--backend processes --workers 2``, today's way to use two
  cores) and with ``--jobs 2``: each suite's wall time, runs per hour, the cores it kept busy
  (CPU seconds over wall seconds), the ratio to one at a time, and whether every run's
  numbers equal the one-at-a-time suite's (metrics rows without their clocks, the lower
  bounds, the head-to-head scores).
- ``cluster``: the same suite on a Ray cluster of two one-CPU nodes on this machine
  (``ray.cluster_utils.Cluster``), ``--jobs 2``; the node running the first run is removed
  once that run has saved an iteration. The suite's wall time, and the same comparison.
- ``time-budget``: a walkable suite of two exact runs on liar's dice with a 20-second time
  budget, one at a time and with ``--jobs 2``: each run's iterations, exploitability at the
  budget and threshold crossings (the numbers of an iteration are the same; how far a run gets
  in its budget is what concurrency can change).

Each part writes into ``--out`` (suites resume: delete the folder to measure again).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psro  # noqa: E402
from psro.storage.text_files import read_json  # noqa: E402

SUITE = ROOT / "experiments" / "suites" / "jobs_throughput.toml"


def bench(suite: Path, out: Path, *flags: str) -> tuple[float, float]:
    """``psro bench SUITE --out OUT FLAGS`` in a fresh process; its wall seconds, and the
    cores it kept busy on average (CPU seconds of it and its processes over wall seconds)."""
    start, used = time.perf_counter(), _children_cpu()
    subprocess.run([sys.executable, "-m", "psro.cli", "bench", str(suite), "--out", str(out),
                    "--quiet", *flags], check=True, cwd=ROOT)
    wall = time.perf_counter() - start
    return wall, (_children_cpu() - used) / wall


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_dirs(out: Path) -> list[Path]:
    """The run directories of a suite's folder."""
    return sorted(p.parent for p in out.glob("*/*/seed-*/config.json"))


def numbers(out: Path) -> dict:
    """Every run's metrics rows without their clocks, its bound, and the head-to-head
    scores (rounded to 12 digits: BLAS's last bits follow its thread count)."""
    def clean(value):
        return round(value, 12) if isinstance(value, float) else value

    found = {}
    for run in run_dirs(out):
        rows = [{k: clean(v) for k, v in r.items() if not k.endswith("_s")}
                for r in psro.load_run(run).metrics]
        bound = run.with_name(f"{run.name}.bound.json")
        found[str(run.relative_to(out))] = (
            rows, read_json(bound)["exploitability"] if bound.exists() else None)
    for path in out.glob("*/head_to_head.json"):
        found[str(path.relative_to(out))] = read_json(path)["pairs"]
    return found


def same(one: Path, other: Path) -> str:
    a, b = numbers(one), numbers(other)
    if a.keys() != b.keys():
        return f"different runs ({len(a)} against {len(b)})"
    differ = [k for k in a if a[k] != b[k]]
    return "identical" if not differ else f"differ in {', '.join(differ)}"


CEILING = textwrap.dedent("""
    import os, sys, time
    os.sched_setaffinity(0, {int(sys.argv[1])})
    import psro
    start = time.perf_counter()
    psro.PSRO("phantom_ttt(obstype=reveal-nothing)", "ppo", "latest", seed=0,
              ppo={"env_steps": 50000, "greedy": False},
              lower_bound={"final": False}).run(iterations=1)
    print(time.perf_counter() - start)
""")


def ceiling(out: Path) -> None:
    """What two processes at once get from this machine: one PPO iteration (two best responses
    of 50,000 steps) alone on core 0, then two copies at once on cores 0 and 1."""
    def launch(core: int) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-c", CEILING, str(core)], cwd=ROOT,
                                stdout=subprocess.PIPE, text=True)

    alone = float(launch(0).communicate()[0])
    pair = [launch(0), launch(1)]
    together = max(float(p.communicate()[0]) for p in pair)
    print(f"ceiling: one PPO iteration alone {alone:.1f} s, two at once on two cores "
          f"{together:.1f} s: two processes get {2 * alone / together:.2f}x the work of one "
          f"from this machine", flush=True)


def throughput(out: Path) -> None:
    runs = 8
    print(f"throughput: {SUITE.name}, {runs} PPO runs, {os.cpu_count()} CPU(s)", flush=True)
    rows = []
    for label, folder, flags in (
            ("one at a time (local)", "one", ("--backend", "local")),
            ("one at a time (processes, 2 workers)", "processes",
             ("--backend", "processes", "--workers", "2")),
            ("--jobs 2", "jobs2", ("--jobs", "2"))):
        seconds, busy = bench(SUITE, out / folder, *flags)
        rows.append((label, seconds, busy, same(out / "one", out / folder)))
    base = rows[0][1]
    print("| suite | wall s | runs per hour | cores busy | throughput vs one at a time "
          "(local) | numbers |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for label, seconds, busy, verdict in rows:
        print(f"| {label} | {seconds:.0f} | {runs * 3600 / seconds:.1f} | {busy:.2f} | "
              f"{base / seconds:.2f}x | {verdict} |", flush=True)


CLUSTER = textwrap.dedent("""
    import sys, threading, time, io
    from pathlib import Path
    from ray.cluster_utils import Cluster
    from psro.bench import get_suite, run_suite

    if __name__ == "__main__":
        out, first = Path(sys.argv[1]), sys.argv[2]
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
        nodes = [cluster.add_node(num_cpus=1) for _ in range(2)]
        cluster.wait_for_nodes()
        stream = io.StringIO()
        start = time.perf_counter()
        thread = threading.Thread(target=run_suite, args=(get_suite(sys.argv[3]), out, {
            "backend": "ray", "ray_address": cluster.address}), kwargs={
            "stream": stream, "jobs": 2})
        thread.start()
        record = out / first / "iterations" / "000001.npz"
        while not record.exists() and thread.is_alive():
            time.sleep(0.1)
        line = next(l for l in stream.getvalue().splitlines() if "started on node" in l)
        lost = next(n for n in nodes if n.node_id[:8] in line)
        cluster.remove_node(lost)
        print(f"removed node {lost.node_id[:8]} at {time.perf_counter() - start:.0f} s",
              flush=True)
        thread.join()
        print(f"suite wall s {time.perf_counter() - start:.1f}")
        print("\\n".join(l for l in stream.getvalue().splitlines() if "again" in l))
        cluster.shutdown()
""")


def cluster(out: Path) -> None:
    print("cluster: the same suite on two one-CPU Ray nodes, --jobs 2, a node removed",
          flush=True)
    result = subprocess.run(
        [sys.executable, "-c", CLUSTER, str(out / "cluster"), "phantom-ttt/psro/seed-0",
         str(SUITE)], cwd=ROOT, capture_output=True, text=True)
    if result.returncode:
        sys.exit(result.stderr[-3000:])
    print(textwrap.indent(result.stdout.strip(), "    "))
    print(f"    numbers against one at a time: {same(out / 'one', out / 'cluster')}",
          flush=True)


def time_budget(out: Path) -> None:
    suite = out / "time_budget.toml"
    suite.parent.mkdir(parents=True, exist_ok=True)
    suite.write_text(textwrap.dedent("""
        name = "time-budget"
        seeds = [0]
        [[games]]
        game = "liars_dice"
        label = "Liar's dice"
        tier = "walkable"
        time_budget_s = 20
        thresholds = [0.1, 0.01, 0.001]
        [[games.methods]]
        label = "xdo, cfr"
        settings = {oracle = "exact", algorithm = "xdo", xdo_solver = "cfr"}
        [[games.methods]]
        label = "psro"
        settings = {oracle = "exact", algorithm = "psro", meta_solver = "nash"}
        """))
    print("time budget: liar's dice, two exact runs of 20 s each", flush=True)
    print("| suite | method | iterations | exploitability at the budget | "
          "seconds to 0.1 / 0.01 / 0.001 |")
    print("| --- | --- | ---: | ---: | --- |")
    for label, folder, flags in (("one at a time", "budget-one", ()),
                                 ("--jobs 2", "budget-jobs2", ("--jobs", "2"))):
        bench(suite, out / folder, *flags)[0]
        for run in run_dirs(out / folder):
            rows = psro.load_run(run).metrics
            crossings = [next((f"{r['wall_time_s']:.1f}" for r in rows
                               if r["exploitability"] <= t), "-") for t in (0.1, 0.01, 0.001)]
            print(f"| {label} | {run.parent.name} | {rows[-1]['iteration']} | "
                  f"{rows[-1]['exploitability']:.4g} | {' / '.join(crossings)} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/bench-suite-jobs", type=Path)
    parser.add_argument("--parts", default="ceiling,throughput,cluster,time-budget")
    args = parser.parse_args()
    parts = args.parts.split(",")
    unknown = set(parts) - {"ceiling", "throughput", "cluster", "time-budget"}
    if unknown:
        sys.exit(f"unknown --parts {', '.join(sorted(unknown))}; accepted: ceiling, "
                 f"throughput, cluster, time-budget")
    if "cluster" in parts and "throughput" not in parts and not (args.out / "one").exists():
        sys.exit("--parts cluster compares with the one-at-a-time suite: run throughput first")
    for part, measure in (("ceiling", ceiling), ("throughput", throughput), ("cluster", cluster),
                          ("time-budget", time_budget)):
        if part in parts:
            measure(args.out)
    print(json.dumps({"cpus": os.cpu_count()}))


if __name__ == "__main__":
    main()
