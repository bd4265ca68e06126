"""Two-player zero-sum (and constant-sum) games solved exactly by linear programming."""

from typing import NamedTuple

import numpy as np
from scipy.optimize import linprog

from solvers.errors import SolverError
from solvers.validation import PayoffError, _as_float_array, check_payoff_values

ZERO_SUM_RTOL = 1e-9
"""Tolerance of :func:`zero_sum_nash`: NashConv of the result <= ZERO_SUM_RTOL * max|A|."""

_HIGHS_OPTIONS = {
    "primal_feasibility_tolerance": 1e-10,
    "dual_feasibility_tolerance": 1e-10,
}


class ZeroSumSolution(NamedTuple):
    """A Nash equilibrium of the zero-sum game ``[A, -A]``: row mixture, column mixture and the
    value of the game to the row player. Unpacks as ``x, y, value = zero_sum_nash(A)``."""

    row: np.ndarray
    col: np.ndarray
    value: float


def _as_matrix(A) -> np.ndarray:
    matrix = _as_float_array(A, "the payoff matrix")
    if matrix.ndim != 2:
        raise PayoffError(f"a zero-sum game is a 2-D payoff matrix; got shape {matrix.shape}")
    if matrix.size == 0:
        raise PayoffError(f"the payoff matrix is empty (shape {matrix.shape})")
    return check_payoff_values(matrix, "the payoff matrix")


def _gap(A: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Duality gap max_i (Ay)_i - min_j (x^T A)_j, which equals NashConv in a zero-sum game."""
    return float((A @ y).max() - (x @ A).min())


def _to_simplex(v: np.ndarray) -> np.ndarray:
    v = np.clip(v, 0.0, None)
    total = v.sum()
    if total <= 0:
        return np.full(v.shape, 1.0 / v.size)
    return v / total


def _equalise_on_support(M: np.ndarray, x: np.ndarray, y: np.ndarray, tol: float = 1e-9):
    """Refine a simplex solution by solving the indifference equations on its supports.

    On the supports S of x and T of y an equilibrium satisfies ``x_S^T M_ST = v`` and
    ``M_ST y_T = v`` with both mixtures summing to 1. Least squares solves both systems; the
    caller keeps the refined pair only if it has a smaller duality gap.
    """
    S = np.flatnonzero(x > tol)
    T = np.flatnonzero(y > tol)
    sub = M[np.ix_(S, T)]
    # Unknowns (x_S, v): sub^T x_S - v = 0, sum x_S = 1.
    lhs = np.zeros((len(T) + 1, len(S) + 1))
    lhs[: len(T), : len(S)] = sub.T
    lhs[: len(T), -1] = -1.0
    lhs[-1, : len(S)] = 1.0
    rhs = np.zeros(len(T) + 1)
    rhs[-1] = 1.0
    xs = np.linalg.lstsq(lhs, rhs, rcond=None)[0][:-1]
    lhs = np.zeros((len(S) + 1, len(T) + 1))
    lhs[: len(S), : len(T)] = sub
    lhs[: len(S), -1] = -1.0
    lhs[-1, : len(T)] = 1.0
    rhs = np.zeros(len(S) + 1)
    rhs[-1] = 1.0
    yt = np.linalg.lstsq(lhs, rhs, rcond=None)[0][:-1]
    x2 = np.zeros_like(x)
    y2 = np.zeros_like(y)
    x2[S] = xs
    y2[T] = yt
    return _to_simplex(x2), _to_simplex(y2)


_GENERATION_MIN_SIZE = 150
_GENERATION_FRACTION = 0.55
_WARM_START_STEPS = 300


def _solve_positive_lp(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equilibrium of the zero-sum game M (all entries > 0) by one LP: ``min sum(u)`` subject
    to ``M^T u >= 1``, ``u >= 0``; then ``x = u / sum(u)`` and y is the normalised dual."""
    n, m = M.shape
    res = linprog(np.ones(n), A_ub=-M.T, b_ub=-np.ones(m), bounds=[(0.0, None)] * n,
                  method="highs-ds", options={**_HIGHS_OPTIONS, "presolve": False})
    if res.status != 0:
        raise SolverError(f"HiGHS could not solve the zero-sum LP: {res.message}")
    return _to_simplex(res.x), _to_simplex(-res.ineqlin.marginals)


def _regret_matching_plus(M: np.ndarray, steps: int) -> tuple[np.ndarray, np.ndarray]:
    """Linearly averaged, alternating regret matching+ on M: a cheap guess of the supports."""
    n, m = M.shape
    x = np.full(n, 1.0 / n)
    y = np.full(m, 1.0 / m)
    rx, ry = np.zeros(n), np.zeros(m)
    ax, ay = np.zeros(n), np.zeros(m)
    for t in range(1, steps + 1):
        u = M @ y
        rx = np.maximum(rx + u - x @ u, 0.0)
        x = rx / rx.sum() if rx.sum() > 0 else np.full(n, 1.0 / n)
        ax += t * x
        v = -(x @ M)
        ry = np.maximum(ry + v - y @ v, 0.0)
        y = ry / ry.sum() if ry.sum() > 0 else np.full(m, 1.0 / m)
        ay += t * y
    return ax, ay


def _constraint_generation(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Solve the LP on a growing subset of rows and columns until no other row or column
    improves on the restricted solution; then it is an equilibrium of the whole game."""
    n, m = M.shape
    ax, ay = _regret_matching_plus(M, _WARM_START_STEPS)
    rows = np.zeros(n, dtype=bool)
    cols = np.zeros(m, dtype=bool)
    rows[np.argsort(-ax)[: max(1, int(_GENERATION_FRACTION * n))]] = True
    cols[np.argsort(-ay)[: max(1, int(_GENERATION_FRACTION * m))]] = True
    while True:
        R, C = np.flatnonzero(rows), np.flatnonzero(cols)
        xs, ys = _solve_positive_lp(M[np.ix_(R, C)])
        x = np.zeros(n)
        y = np.zeros(m)
        x[R], y[C] = xs, ys
        value = x @ M @ y
        better_rows = (M @ y > value + 1e-12) & ~rows
        better_cols = (x @ M < value - 1e-12) & ~cols
        if not better_rows.any() and not better_cols.any():
            return x, y
        rows |= better_rows
        cols |= better_cols


def _refined(M: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``(x, y)`` or its refinement on the supports, whichever has the smaller gap, and that
    gap."""
    gap = _gap(M, x, y)
    if gap > 0:
        x2, y2 = _equalise_on_support(M, x, y)
        gap2 = _gap(M, x2, y2)
        if gap2 < gap:
            return x2, y2, gap2
    return x, y, gap


def zero_sum_nash(A) -> ZeroSumSolution:
    """Solve the two-player zero-sum game ``[A, -A]`` by linear programming (scipy's HiGHS).

    Parameters
    ----------
    A : array of shape (n, m)
        Row player's payoffs; the column player receives ``-A``. Any finite real matrix,
        including 1 x m, n x 1, constant and badly scaled ones.

    Returns
    -------
    ZeroSumSolution
        ``(x, y, value)``: x of shape (n,) and y of shape (m,) are the row and column players'
        equilibrium mixtures; ``value = x^T A y`` is the game's value to the row player.

    Tolerance: the NashConv of ``(x, y)`` (the duality gap) is at most
    ``ZERO_SUM_RTOL * max|A|`` = 1e-9 * max|A|; a solution that misses it raises
    :class:`SolverError` rather than being returned.

    ``A`` is rescaled to ``M`` in [0.1, 1.1] and the LP ``min sum(u) s.t. M^T u >= 1, u >= 0`` is
    solved by HiGHS's dual simplex (``x = u / sum(u)``; the column mixture is read from the
    dual values). Beyond 150 x 150 the LP is solved by constraint generation: a few hundred
    regret-matching+ steps (matrix-vector products) guess the supports, the LP restricted to
    the likeliest 55% of rows and columns is solved, and any row or column that would improve
    on it is added until none does, so the answer is an equilibrium of the full game (4-15x
    faster than one large LP at 500 x 500 and above); where its answer misses the tolerance, the
    one full LP is solved instead. Both mixtures are then refined on their supports.
    """
    A = _as_matrix(A)
    n, m = A.shape
    lo, hi = float(A.min()), float(A.max())
    scale = max(abs(lo), abs(hi), 1e-300)
    if hi - lo <= ZERO_SUM_RTOL * scale:
        x = np.full(n, 1.0 / n)
        y = np.full(m, 1.0 / m)
        return ZeroSumSolution(x, y, float(x @ A @ y))
    lo_s, hi_s = lo / scale, hi / scale
    if np.isfinite(hi - lo):
        M = (A - lo) / (hi - lo) + 0.1  # in [0.1, 1.1]: strictly positive
    else:  # entries near +-1.8e308: scaled by max|A| first, as hi - lo overflows
        M = (A / scale - lo_s) / (hi_s - lo_s) + 0.1
    generated = min(n, m) > _GENERATION_MIN_SIZE
    x, y, gap = _refined(M, *(_constraint_generation(M) if generated else _solve_positive_lp(M)))
    if generated and gap * (hi_s - lo_s) > ZERO_SUM_RTOL:
        # constraint generation's restricted LPs can end a little off (seen: 2.3e-9 on a
        # 163 x 163 goofspiel table); the one full LP is then solved instead
        x, y, gap = _refined(M, *_solve_positive_lp(M))
    if gap * (hi_s - lo_s) > ZERO_SUM_RTOL:
        raise SolverError(
            f"zero-sum LP solution misses its tolerance: NashConv "
            f"{gap * (hi_s - lo_s) * scale:.3g} > "
            f"{ZERO_SUM_RTOL} * max|A| = {ZERO_SUM_RTOL * scale:.3g}"
        )
    return ZeroSumSolution(x, y, float(x @ A @ y))
