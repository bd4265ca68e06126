"""Benchmark: `xdo` against OpenSpiel's C++ CFR+ on the smallest walkable games, repeated.

Run: ``python experiments/bench_small_exact.py [--games kuhn_poker "kuhn_poker(players=3)"]
[--repeats 15] [--threshold 1e-3]``. On games solved in milliseconds one measurement says
little (on the 2-core development machine a run's time varies by up to 2x from one run to the
next), so each repeat runs, one after the other in this process:

- ``xdo`` (the exact oracle, its default restricted-game solver) writing a run directory, as
  the benchmark suite runs it: the run's own clock (``wall_time_s``, real time, writing
  included) when its exploitability is first at or below the threshold;
- the same run without a run directory;
- OpenSpiel's C++ CFR+ (``pyspiel.CFRPlusSolver``) as the suite's reference line measures
  it, to its exact crossing of the threshold (its average policy measured after every
  iteration around it); its clock counts only its own iterations.

It prints, per game, the median time of each over the repeats with the fastest and slowest,
the ratio of the medians, and in how many repeats ``xdo`` (with its run directory) reached the
threshold sooner than CFR+ in the same repeat.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402
from psro.bench.references import cfr_plus_curve  # noqa: E402


def xdo_time(game: str, threshold: float, out: str | None) -> float:
    """The run's clock when ``xdo`` first reaches ``threshold`` (the run's own stop rule ends
    it; an ``AssertionError`` if it never does)."""
    rows = psro.PSRO(game, "exact", algorithm="xdo", out=out).run(
        target_exploitability=threshold, time_budget_s=60)
    hit = next((r for r in rows if r["exploitability"] <= threshold), None)
    assert hit is not None, f"xdo did not reach {threshold} on {game}"
    return hit["wall_time_s"]


def cfr_plus_time(game: str, threshold: float, budget_s: float = 60.0) -> tuple[float, int]:
    """Seconds of CFR+ iterations until its average policy is first at or below
    ``threshold``, and that iteration: the suite's reference line
    (:func:`psro.bench.references.cfr_plus_curve`, which finds the exact crossing), stopped
    there."""
    rows = cfr_plus_curve(game, budget_s, floor=threshold, thresholds=(threshold,))
    hit = next((r for r in rows if r["exploitability"] <= threshold), None)
    if hit is None:
        raise AssertionError(f"CFR+ did not reach {threshold} on {game} in {budget_s:g} s")
    return hit["wall_time_s"], hit["iteration"]


def measure(game: str, repeats: int, threshold: float) -> dict[str, list[float]]:
    """Each method's time to ``threshold`` in every repeat (the methods alternate)."""
    times: dict[str, list[float]] = {"xdo": [], "xdo, no run directory": [], "CFR+": []}
    xdo_time(game, threshold, None)  # imports and first calls, outside the measurement
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            times["xdo"].append(xdo_time(game, threshold, os.path.join(tmp, "run")))
        times["xdo, no run directory"].append(xdo_time(game, threshold, None))
        times["CFR+"].append(cfr_plus_time(game, threshold)[0])
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["kuhn_poker", "kuhn_poker(players=3)"])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--threshold", type=float, default=1e-3)
    args = parser.parse_args(argv)
    print(f"time to exploitability {args.threshold:g}, {args.repeats} repeats: median "
          f"(fastest - slowest), ms")
    print("| game | xdo | xdo, no run directory | CFR+ (C++) | CFR+ / xdo | xdo sooner |")
    print("| --- | --- | --- | --- | --- | --- |")
    for game in args.games:
        times = measure(game, args.repeats, args.threshold)
        cells = [f"{1e3 * statistics.median(t):.1f} ({1e3 * min(t):.1f} - {1e3 * max(t):.1f})"
                 for t in times.values()]
        ratio = statistics.median(times["CFR+"]) / statistics.median(times["xdo"])
        sooner = sum(a < b for a, b in zip(times["xdo"], times["CFR+"], strict=True))
        print(f"| {game} | {' | '.join(cells)} | {ratio:.2f} | {sooner}/{args.repeats} |",
              flush=True)


if __name__ == "__main__":
    main()
