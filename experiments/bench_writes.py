"""Benchmark: what saving a run costs, against the same run without a run directory.

Run: ``python experiments/bench_writes.py [--game leduc_poker] [--iterations 400]``. Runs exact
PSRO twice in this process, once without ``out`` (the reference: computing only) and once
writing every iteration to a run directory, and prints the real elapsed time of each, the
time spent writing (the ``write_s`` column), its share of the elapsed time, the mean writing
time of the first and last 50 iterations (flat: saving an iteration does not grow with the
run), the run directory's size, and how far the run's own clock (``wall_time_s``) is from
real time.

Target (issue 9): writing takes under 10% of the elapsed time on Leduc, 400 iterations.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import psro  # noqa: E402


def timed_run(game: str, iterations: int, out: str | None) -> tuple[float, list[dict]]:
    start = time.perf_counter()
    rows = psro.PSRO(game, "exact", "nash", out=out).run(iterations=iterations)
    return time.perf_counter() - start, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=400)
    args = parser.parse_args()
    reference, plain = timed_run(args.game, args.iterations, None)
    with tempfile.TemporaryDirectory() as tmp:
        elapsed, rows = timed_run(args.game, args.iterations, os.path.join(tmp, "run"))
        size = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())
    writing = sum(r["write_s"] for r in rows[1:])  # row k holds the writing after row k - 1
    head = [r["write_s"] for r in rows[1:51]]
    tail = [r["write_s"] for r in rows[-50:]]
    same = all(a["exploitability"] == b["exploitability"] for a, b in zip(plain, rows,
                                                                         strict=True))
    print(f"{args.game}, exact oracle, nash, {args.iterations} iterations")
    print(f"  without a run directory: {reference:8.2f} s")
    print(f"  with a run directory:    {elapsed:8.2f} s ({elapsed / reference:.2f}x), "
          f"{size / 1e6:.1f} MB written")
    print(f"  writing: {writing:.2f} s = {writing / elapsed:.1%} of the elapsed time "
          f"(target < 10%)")
    print(f"  mean writing per iteration: first 50 {1e3 * sum(head) / len(head):.2f} ms, "
          f"last 50 {1e3 * sum(tail) / len(tail):.2f} ms")
    print(f"  run clock wall_time_s {rows[-1]['wall_time_s']:.2f} s vs real {elapsed:.2f} s; "
          f"same exploitability with and without writing: {same}")


if __name__ == "__main__":
    main()
