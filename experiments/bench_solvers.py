"""Benchmark: our solvers beside OpenSpiel's LP and nashpy, in one process, as ratios.

Run: ``make bench`` or ``python experiments/bench_solvers.py [--quick]``. Needs the ``bench``
extra (cvxpy and ECOS, for OpenSpiel's ``lp_solver``). Prints two tables:

1. random zero-sum games n x n: seconds and NashConv of ``solvers.zero_sum_nash`` beside
   OpenSpiel's ``lp_solver.solve_zero_sum_matrix_game`` and nashpy's Lemke-Howson (small n
   only: it does not finish in minutes beyond about 20 x 20);
2. random general-sum bimatrix games: ``solvers.nash`` (Lemke-Howson) beside nashpy's
   Lemke-Howson, support and vertex enumeration, where each finishes.

Target (issue 5): 500 x 500 zero-sum at least 10x faster than OpenSpiel's LP, NashConv <= 1e-9.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import solvers  # noqa: E402


def _timed(fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def _nashpy_worker(kind, A, B, queue):
    import nashpy

    warnings.simplefilter("ignore")
    game = nashpy.Game(A, B)
    start = time.perf_counter()
    if kind == "lemke_howson":
        x, y = game.lemke_howson(initial_dropped_label=0)
    elif kind == "support_enumeration":
        x, y = next(iter(game.support_enumeration()), (None, None))
    else:
        x, y = next(iter(game.vertex_enumeration()), (None, None))
    queue.put((time.perf_counter() - start, x, y))


def _nashpy(kind, A, B, timeout):
    """Run a nashpy method in a child process so a hang is cut off at ``timeout`` seconds."""
    queue = mp.Queue()
    proc = mp.Process(target=_nashpy_worker, args=(kind, A, B, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None, None
    seconds, x, y = queue.get()
    if x is None or np.any(np.isnan(x)) or np.any(np.isnan(y)):
        return seconds, float("nan")
    return seconds, solvers.nash_conv([A, B], [x, y])


def _openspiel_lp(A):
    import pyspiel
    from open_spiel.python.algorithms import lp_solver

    game = pyspiel.create_matrix_game(A.tolist(), (-A).tolist())
    seconds, (x, y, _, _) = _timed(lp_solver.solve_zero_sum_matrix_game, game)
    x = np.clip(np.asarray(x, float).ravel(), 0, None)
    y = np.clip(np.asarray(y, float).ravel(), 0, None)
    return seconds, solvers.nash_conv(A, [x / x.sum(), y / y.sum()])


def _fmt(seconds, nash_conv):
    if seconds is None:
        return f"{'timeout':>10} {'':>9}"
    return f"{seconds:10.4f} {nash_conv:9.1e}"


def zero_sum_table(sizes, timeout):
    rng = np.random.default_rng(0)
    print("Zero-sum n x n (standard normal payoffs): seconds and NashConv")
    print(f"{'n':>5} | {'ours':>10} {'NashConv':>9} | {'OpenSpiel LP':>10} {'NashConv':>9} | "
          f"{'ratio':>6} | {'nashpy LH':>10} {'NashConv':>9}")
    for n in sizes:
        A = rng.standard_normal((n, n))
        ours_s, (x, y, _) = _timed(solvers.zero_sum_nash, A)
        ours_nc = solvers.nash_conv(A, [x, y])
        try:
            os_s, os_nc = _openspiel_lp(A)
            ratio = f"{os_s / ours_s:6.1f}"
        except ImportError as err:
            os_s, os_nc, ratio = None, None, "  n/a"
            print(f"  (OpenSpiel LP unavailable: {err}; install the bench extra)")
        lh = _nashpy("lemke_howson", A, -A, timeout) if n <= 50 else (None, None)
        print(f"{n:5d} | {_fmt(ours_s, ours_nc)} | {_fmt(os_s, os_nc)} | {ratio} | "
              f"{_fmt(*lh)}")


def bimatrix_table(sizes, timeout):
    rng = np.random.default_rng(1)
    print("\nGeneral-sum n x n (standard normal payoffs): seconds and NashConv")
    print(f"{'n':>5} | {'ours LH':>10} {'NashConv':>9} | {'nashpy LH':>10} {'NashConv':>9} | "
          f"{'nashpy SE':>10} {'NashConv':>9} | {'nashpy VE':>10} {'NashConv':>9}")
    for n in sizes:
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        ours_s, (x, y) = _timed(solvers.nash, [A, B], "lemke_howson")
        cells = [_fmt(ours_s, solvers.nash_conv([A, B], [x, y]))]
        for kind in ("lemke_howson", "support_enumeration", "vertex_enumeration"):
            cells.append(_fmt(*_nashpy(kind, A, B, timeout)))
        print(f"{n:5d} | " + " | ".join(cells))
    for n in (200,):
        A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
        ours_s, (x, y) = _timed(solvers.nash, [A, B], "lemke_howson")
        print(f"{n:5d} | {_fmt(ours_s, solvers.nash_conv([A, B], [x, y]))} | (nashpy skipped)")
    A = rng.integers(0, 3, (50, 50)).astype(float)
    B = rng.integers(0, 3, (50, 50)).astype(float)
    ours_s, (x, y) = _timed(solvers.nash, [A, B], "lemke_howson")
    nash_conv = solvers.nash_conv([A, B], [x, y])
    print(f"50 degenerate (payoffs in {{0,1,2}}) | ours {_fmt(ours_s, nash_conv)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (a smoke run)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds before a nashpy run is cut off (default 30)")
    args = parser.parse_args()
    if args.quick:
        zero_sum_table([10, 50], args.timeout)
        bimatrix_table([5, 10], args.timeout)
    else:
        zero_sum_table([10, 50, 100, 200, 500, 1000], args.timeout)
        bimatrix_table([5, 10, 20, 50], args.timeout)


if __name__ == "__main__":
    main()
