"""Benchmark: the PSRO variants side by side on Leduc poker with the exact oracle.

Run: ``python experiments/bench_variants.py [--game leduc_poker] [--iterations 30]
[--budget 120]``. Runs ``psro``, ``anytime`` and ``rectified`` (Nash meta-solver) for the same
iterations in this process and prints, per variant, exploitability at iterations 5, 10, 20 and
the last, the population size, the wall time, whether exploitability ever rose, and, in a
second run of each variant limited to ``--budget`` seconds, the first iteration (and time) at
or below 0.05 and 0.001 (``xdo`` stops by itself once its restricted game is complete).

``--ppo-seconds S`` runs ``xdo`` and ``psro`` (``--ppo-variants``: others, e.g. ``pipeline`` or
``anytime:anytime_rounds=10``, regret matching against the PPO best responses) with the PPO
oracle for S seconds each instead (processes backend, 2 workers) and prints their
exploitability after 300, 600, 1200 and 1800 s and at the end (``--figure``: their curves
against wall time). ``--seeds 0,1,2,3,4`` runs each variant once per seed and adds each time's
mean over seeds with a 95% interval, a Welch test between the variants and, with ``--out DIR``
(each run written to ``DIR/VARIANT-seedS``, resumed if the script is stopped), a ``psro
report`` of all runs in ``DIR/report``.

Targets (issue 11): ``xdo`` at or below 0.001 within 20 iterations and sooner in wall time
than ``psro``; ``anytime`` never increases and reaches 0.05 in fewer iterations than ``psro``.
``jpsro`` has its own benchmark against OpenSpiel's: ``experiments/bench_jpsro.py``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from common import curves_figure  # noqa: E402
from scipy import stats  # noqa: E402

import psro  # noqa: E402
from psro.reports import write_report  # noqa: E402
from psro.reports.groups import interval  # noqa: E402

VARIANTS = ("psro", "anytime", "rectified", "xdo")


def run(game: str, algorithm: str, iterations: int,
        budget: float | None = None) -> tuple[list[dict], float]:
    start = time.perf_counter()
    rows = psro.PSRO(game, "exact", algorithm=algorithm).run(
        iterations=iterations, time_budget_s=budget)
    return rows, time.perf_counter() - start


def first_below(rows: list[dict], threshold: float) -> str:
    hit = next((r for r in rows if r["exploitability"] <= threshold), None)
    if hit is None:
        return (f"not reached ({rows[-1]['iteration']} iterations, "
                f"{rows[-1]['exploitability']:.3f} at the end)")
    return f"iteration {hit['iteration']} ({hit['wall_time_s']:.1f} s)"


def progress(algorithm: str):
    """A callback printing each iteration's exploitability to stderr (long runs)."""
    def show(run, row: dict) -> None:
        print(f"    {algorithm} iteration {row['iteration']}: {row['exploitability']:.4f} at "
              f"{row['wall_time_s']:.0f} s", file=sys.stderr, flush=True)
    return show


def value_at(rows: list[dict], seconds: float) -> float:
    """Exploitability of the last iteration finished within ``seconds`` of wall time (NaN
    before the first)."""
    done = [r for r in rows if r["wall_time_s"] <= seconds]
    return float(done[-1]["exploitability"]) if done else float("nan")


def at_time(rows: list[dict], seconds: float) -> str:
    """:func:`value_at` as text ("-" before the first iteration)."""
    value = value_at(rows, seconds)
    return "-" if np.isnan(value) else f"{value:.4f}"


def variant_settings(text: str) -> dict:
    """``NAME`` or ``NAME:KEY=VALUE,...`` (e.g. ``anytime:anytime_rounds=10``) as RunConfig
    fields."""
    name, _, options = text.partition(":")
    settings: dict = {"algorithm": name}
    for option in filter(None, options.split(",")):
        key, _, value = option.partition("=")
        settings[key] = int(value) if value.isdigit() else value
    return settings


def ppo_comparison(game: str, seconds: float, variants: list[str], seeds: list[int],
                   out: Path | None = None, figure: Path | None = None) -> None:
    """Each variant with the PPO oracle (default options, processes backend, 2 workers) for
    the same wall time, once per seed (seeds interleaved, so a slower spell of the machine
    falls on every variant); exploitability is exact (networks tabularised). ``out``: each run
    in ``out/VARIANT-seedS`` (a finished run is read back, a killed one resumed) and, with
    several seeds, a ``psro report`` of them in ``out/report``. ``figure``: the curves against
    wall time (one seed) or, from the report, their means with 95% bands (several)."""
    print(f"{game}, PPO oracle, {seconds:.0f} s each, processes backend with 2 workers, "
          f"seeds {', '.join(map(str, seeds))}", flush=True)
    curves: dict[str, dict[int, list[dict]]] = {v: {} for v in variants}
    for seed in seeds:
        for algorithm in variants:
            directory = out / f"{algorithm.replace(':', '-')}-seed{seed}" if out else None
            rows, stop = timed_run(game, algorithm, seed, seconds, directory)
            curves[algorithm][seed] = rows
            lowest = min(rows, key=lambda r: r["exploitability"])
            marks = ", ".join(f"{t:g}: {first_below(rows, t)}" for t in (0.3, 0.1, 0.05))
            times = ", ".join(f"{t} s: {at_time(rows, t)}" for t in TIMES if t <= seconds)
            print(f"  {algorithm} seed {seed} after {rows[-1]['wall_time_s']:.0f} s: "
                  f"{rows[-1]['exploitability']:.4f} (iteration {rows[-1]['iteration']}, "
                  f"lowest {lowest['exploitability']:.4f} at iteration {lowest['iteration']}, "
                  f"stop {stop}); first <= {marks}; at {times}", flush=True)
    if len(seeds) > 1:
        seed_table(curves, [t for t in TIMES if t <= seconds])
    if out and len(seeds) > 1:
        md, _ = write_report([p for p in sorted(out.iterdir()) if p.name != "report"],
                             out / "report")
        print(f"report: {md}", flush=True)
        if figure:  # the report's curves: mean over seeds with 95% bands
            shutil.copyfile(out / "report" / "exploitability_wall_time_s.png", figure)
    elif figure:
        curves_figure({f"{game}, PPO oracle, processes backend (2 workers)":
                       {v: c[seeds[0]] for v, c in curves.items()}}, figure,
                      x_key="wall_time_s", xlabel="wall time (s)")


TIMES = (300, 600, 1200, 1800)
"""Wall times (s) at which the PPO comparison reads each run's exploitability."""


def timed_run(game: str, algorithm: str, seed: int, seconds: float,
              directory: Path | None) -> tuple[list[dict], str]:
    """One variant for ``seconds`` of run time (in ``directory`` if given: resumed when it
    holds the run already); its metrics rows and stop reason."""
    callbacks = (progress(f"{algorithm} seed {seed}"),)
    if directory is not None and (directory / "config.json").exists():
        run = psro.PSRO.resume(directory, callbacks=callbacks)
    else:
        run = psro.PSRO(game, "ppo", **variant_settings(algorithm),
                        backend="processes", workers=2, seed=seed, out=directory,
                        callbacks=callbacks)
    rows = run.run(iterations=100_000, time_budget_s=seconds)
    return rows, run.stop_reason


def window_mean(rows: list[dict], seconds: float, width: float = 100.0) -> float:
    """Mean exploitability of the iterations finished in ``(seconds - width, seconds]``."""
    values = [r["exploitability"] for r in rows if seconds - width < r["wall_time_s"] <= seconds]
    return float(np.mean(values)) if values else float("nan")


def seed_table(curves: dict[str, dict[int, list[dict]]], times: list[int]) -> None:
    """Per variant and time: the mean over seeds of the exploitability at that time (the
    last iteration finished by then) and of the mean over the 100 s before it, with 95%
    Student-t half-widths; then each variant against the first (Welch's t-test)."""
    values: dict[tuple[str, int, str], np.ndarray] = {}
    for variant, runs in curves.items():
        for t in times:
            values[variant, t, "at"] = np.array([value_at(rows, t) for rows in runs.values()])
            values[variant, t, "window"] = np.array([window_mean(rows, t) for rows in
                                                     runs.values()])
    print("mean over seeds +- 95% half-width (Student t); 'window': mean of the iterations "
          "finished in the 100 s before", flush=True)
    for (variant, t, kind), v in values.items():
        curve = interval(np.zeros(1), v[:, None])
        print(f"  {variant:12s} {t:5d} s {kind:6s} {curve.mean[0]:.4f} +- "
              f"{curve.high[0] - curve.mean[0]:.4f}  "
              f"(seeds: {', '.join(f'{x:.3f}' for x in v)})", flush=True)
    first = next(iter(curves))
    for variant in list(curves)[1:]:
        for t in times:
            for kind in ("at", "window"):
                a, b = values[first, t, kind], values[variant, t, kind]
                test = stats.ttest_ind(a, b, equal_var=False)
                print(f"  {first} - {variant} at {t} s ({kind}): {a.mean() - b.mean():+.4f}, "
                      f"Welch p = {test.pvalue:.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--figure", type=Path, help="write the curves of the timed runs here")
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds of the run that looks for exploitability <= 0.05")
    parser.add_argument("--ppo-seconds", type=float,
                        help="instead: psro and xdo with the PPO oracle for this many seconds")
    parser.add_argument("--seeds", default="0",
                        help="--ppo-seconds: comma-separated seeds, each variant once per seed")
    parser.add_argument("--out", type=Path,
                        help="--ppo-seconds: write each run to OUT/VARIANT-seedS (resumable)")
    parser.add_argument("--ppo-variants", default="xdo,psro",
                        help="the variants of --ppo-seconds (xdo, psro, pipeline, ...; "
                             "NAME:KEY=VALUE sets RunConfig fields, e.g. "
                             "anytime:anytime_rounds=10)")
    args = parser.parse_args()
    if args.ppo_seconds:
        seeds = [int(seed) for seed in args.seeds.split(",")]
        if len(seeds) > 1 and args.figure and not args.out:
            parser.error("--figure with several --seeds draws the report's curves: add --out")
        ppo_comparison(args.game, args.ppo_seconds, args.ppo_variants.split(","), seeds,
                       args.out, args.figure)
        return
    print(f"{args.game}, exact oracle, nash meta-solver", flush=True)
    print(f"{'variant':10s} {'it 5':>9s} {'it 10':>9s} {'it 20':>9s} {'last':>9s} "
          f"{'members':>8s} {'time (s)':>9s}  rose?  "
          f"<= 0.05 / <= 0.001 (within {args.budget:.0f} s)",
          flush=True)
    curves = {}
    for algorithm in VARIANTS:
        rows, elapsed = run(args.game, algorithm, args.iterations)
        ex = [r["exploitability"] for r in rows]
        rose = any(b > a + 1e-9 for a, b in zip(ex, ex[1:], strict=False))
        at = [f"{ex[k]:9.4f}" if k < len(ex) else f"{'':9s}" for k in (5, 10, 20)]
        long_rows, _ = run(args.game, algorithm, 100_000, args.budget)
        curves[algorithm] = [r for r in long_rows if r["iteration"] <= 200]
        print(f"{algorithm:10s} {' '.join(at)} {ex[-1]:9.4f} {rows[-1]['population_size']:8d} "
              f"{elapsed:9.2f}  {'yes' if rose else 'no ':5s}  "
              f"{first_below(long_rows, 0.05)} / {first_below(long_rows, 0.001)}", flush=True)
    if args.figure:
        curves_figure({f"{args.game}, exact oracle": curves}, args.figure)


if __name__ == "__main__":
    main()
