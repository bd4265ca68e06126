"""Benchmark: the toolkit's array work on one BLAS thread (:mod:`psro.backends.threads`) against
BLAS's own thread count (one a core), side by side in one process, on an idle machine or with
one core kept busy by another process (``--busy``).

Three measurements under both settings: a meta-policy's realization plan, ``w @ plans`` (40
members by 24,571 sequences, the size of liar's dice; the mean of ``--repeats`` times 200
products, in microseconds); ``--repeats`` whole ``xdo`` runs to an exact equilibrium,
alternated (``--game``, liar's dice by default; the median on the run clock); and the debate
game's default judge (``--judge-size`` 8: 8x8 images, 6 pixels) trained from scratch
``--repeats`` times, alternated (the median, and a check that both settings train the same
weights). The reference run
is the same run with the loop's limit lifted (``psro.loop.one_blas_thread`` replaced by a
no-op in this process); both give the same metrics rows apart from their clocks, to 1e-12
(the last bits of a BLAS sum follow how many threads split it), which the script checks.

Run: ``python experiments/bench_blas_threads.py [--busy] [--game GAME] [--repeats 3]
[--judge-size 8]``
"""

from __future__ import annotations

import argparse
import contextlib
import math
import multiprocessing
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
from threadpoolctl import threadpool_info, threadpool_limits  # noqa: E402

import games.judge  # noqa: E402
import psro  # noqa: E402
import psro.loop  # noqa: E402


def _spin() -> None:
    while True:
        pass


def product_us(limit: int | None, repeats: int) -> float:
    """The mean time of ``repeats`` times 200 products ``w @ plans``, in microseconds."""
    rng = np.random.default_rng(0)
    plans, w = rng.random((40, 24571)), rng.dirichlet(np.ones(40))
    context = threadpool_limits(limits=1, user_api="blas") if limit == 1 \
        else contextlib.nullcontext()
    with context:
        start = time.perf_counter()
        for _ in range(200 * repeats):
            w @ plans
        return (time.perf_counter() - start) / (200 * repeats) * 1e6


def xdo_run(game: str, one_thread: bool) -> tuple[float, list[dict]]:
    """An ``xdo`` run to an exact equilibrium: its run clock and its rows without clocks."""
    limit = psro.loop.one_blas_thread
    if not one_thread:
        psro.loop.one_blas_thread = contextlib.nullcontext
    try:
        rows = psro.PSRO(game, "exact", algorithm="xdo", seed=0).run(
            time_budget_s=600, target_exploitability=1e-9)
    finally:
        psro.loop.one_blas_thread = limit
    return rows[-1]["wall_time_s"], [{k: v for k, v in r.items() if not k.endswith("_s")}
                                     for r in rows]


def judge_run(one_thread: bool, size: int = 8) -> tuple[float, str]:
    """The debate judge of ``size`` x ``size`` images trained from scratch (6 pixels, seed 0;
    size 8 is the default judge): seconds and its weights' checksum. The reference lifts the
    training's own limit (``games.judge`` sets it itself: games cannot import psro)."""
    limit = games.judge.threadpool_limits
    if not one_thread:
        games.judge.threadpool_limits = lambda **_: contextlib.nullcontext()
    try:
        start = time.perf_counter()
        trained = games.judge.train_judge(size, 6, 0)
        return time.perf_counter() - start, trained.checksum
    finally:
        games.judge.threadpool_limits = limit


def check_same_numbers(own: list[dict], one: list[dict]) -> None:
    """The two settings' rows: the same keys and iterations, every number the same to 1e-12
    (relative; the last bits of a BLAS sum follow how many threads split it)."""
    assert len(own) == len(one), "the two settings ran different numbers of iterations"
    for a, b in zip(own, one, strict=True):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if isinstance(value, float) and isinstance(b[key], float):
                assert math.isclose(value, b[key], rel_tol=1e-12, abs_tol=1e-15), (key, a, b)
            else:
                assert value == b[key], (key, a, b)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true",
                        help="keep one core busy with another process while measuring")
    parser.add_argument("--game", default="liars_dice")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--judge-size", type=int, choices=games.judge.SIZES, default=8,
                        help="the judge's image side (8: the debate game's default judge)")
    args = parser.parse_args(argv)
    threads = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
    psro.game_tree(args.game)  # walked once, outside the runs' clocks
    busy = None
    if args.busy:
        busy = multiprocessing.get_context("spawn").Process(target=_spin, daemon=True)
        busy.start()
    try:
        print(f"{os.cpu_count()} CPUs, BLAS's own thread count {threads}; "
              f"{'one core kept busy by another process' if busy else 'idle'}", flush=True)
        own, one = product_us(None, args.repeats), product_us(1, args.repeats)
        print(f"w @ plans (40 x 24,571): {own:.0f} us on {threads} BLAS threads, "
              f"{one:.0f} us on one ({own / one:.1f}x)", flush=True)
        clocks: dict[bool, list[float]] = {False: [], True: []}
        rows = {}
        for _ in range(args.repeats):
            for one_thread in (False, True):
                seconds, rows[one_thread] = xdo_run(args.game, one_thread)
                clocks[one_thread].append(seconds)
        check_same_numbers(rows[False], rows[True])
        own, one = (float(np.median(clocks[k])) for k in (False, True))
        print(f"xdo on {args.game} to an exact equilibrium ({len(rows[True]) - 1} iterations, "
              f"the same rows): {own:.2f} s on {threads} BLAS threads, {one:.2f} s on one "
              f"({own / one:.2f}x; medians of {args.repeats} runs each, alternated: "
              f"{' '.join(f'{c:.2f}' for c in clocks[False])} s and "
              f"{' '.join(f'{c:.2f}' for c in clocks[True])} s)")
        judged: dict[bool, list[float]] = {False: [], True: []}
        checksums = set()
        for _ in range(args.repeats):
            for one_thread in (False, True):
                seconds, checksum = judge_run(one_thread, args.judge_size)
                judged[one_thread].append(seconds)
                checksums.add(checksum)
        assert len(checksums) == 1, "the two settings trained different judges"
        own, one = (float(np.median(judged[k])) for k in (False, True))
        print(f"the debate judge's training ({args.judge_size}x{args.judge_size}, 6 pixels; the "
              f"same weights): {own:.2f} s on "
              f"{threads} BLAS threads, {one:.2f} s on one ({own / one:.2f}x; medians of "
              f"{args.repeats})")
    finally:
        if busy is not None:
            busy.terminate()


if __name__ == "__main__":
    main()
