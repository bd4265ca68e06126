"""Lemke-Howson for bimatrix games, with lexicographic pivoting so degenerate games terminate.

The two best-response polytopes are kept as float tableaux::

    P:  A y + r = 1,  y, r >= 0        (n rows, one per row strategy)
    Q:  B^T x + s = 1, x, s >= 0       (m rows, one per column strategy)

after shifting A and B to be positive. Labels: ``x_i`` and ``r_i`` carry label ``i``; ``y_j``
and ``s_j`` carry label ``n + j``. Starting from the artificial equilibrium (0, 0), the label
``k`` is dropped and complementary pivots alternate between the tableaux until ``k`` is
picked up again; the normalised basic ``x`` and ``y`` are then a Nash equilibrium
(Lemke & Howson 1964; von Stengel 2002, "Computing equilibria for two-person games").
Ties in the minimum-ratio test are broken lexicographically on the columns of the slack
variables, so the path is unique even in degenerate games.
"""

from __future__ import annotations

import numpy as np

from solvers.errors import OptionError, PayoffError, SolverError
from solvers.validation import as_payoffs


class _Tableau:
    """Rows ``[M | I | 1]`` for ``M z + w = 1``; ``basis[i]`` is the variable basic in row i.

    Variables are numbered globally: ``0..n-1`` are x, ``n..n+m-1`` are y, ``n+m..2n+m-1`` are
    r, ``2n+m..2n+2m-1`` are s. ``columns`` maps a global variable to its column here.
    """

    def __init__(self, matrix: np.ndarray, variables: list[int], slacks: list[int]):
        rows = matrix.shape[0]
        self.table = np.hstack([matrix, np.eye(rows), np.ones((rows, 1))])
        self.columns = {v: c for c, v in enumerate(variables + slacks)}
        self.slack_start = len(variables)
        self.basis = list(slacks)

    def pivot(self, entering: int, tol: float) -> int:
        """Bring ``entering`` into the basis; return the variable that leaves."""
        T = self.table
        col = T[:, self.columns[entering]]
        candidates = np.flatnonzero(col > tol)
        if candidates.size == 0:
            raise SolverError("Lemke-Howson: unbounded ray (the game is not well posed)")
        # Lexicographic minimum ratio: right-hand side first, then the slack columns in order.
        keys = [T.shape[1] - 1] + list(range(self.slack_start, T.shape[1] - 1))
        for key in keys:
            ratios = T[candidates, key] / col[candidates]
            best = ratios.min()
            candidates = candidates[ratios <= best + tol * max(1.0, abs(best))]
            if candidates.size == 1:
                break
        row = int(candidates[0])
        T[row] /= T[row, self.columns[entering]]
        factors = T[:, self.columns[entering]].copy()
        factors[row] = 0.0
        T -= np.outer(factors, T[row])
        leaving = self.basis[row]
        self.basis[row] = entering
        return leaving

    def values(self, variables: range) -> np.ndarray:
        out = np.zeros(len(variables))
        for row, var in enumerate(self.basis):
            if var in variables:
                out[var - variables.start] = self.table[row, -1]
        return out


def _onto_one_two(M: np.ndarray) -> np.ndarray:
    """``M`` mapped affinely onto [1, 2] (all ones where ``M`` is constant)."""
    spread = float(M.max() - M.min())
    if spread == 0.0:
        return np.ones_like(M, dtype=float)
    return 1.0 + (M - M.min()) / spread


def lemke_howson(A: np.ndarray, B: np.ndarray, initial_label: int = 0,
                 max_pivots: int | None = None, tol: float = 1e-12):
    """One Nash equilibrium of the bimatrix game ``(A, B)`` by Lemke-Howson.

    Parameters
    ----------
    A, B : arrays of shape (n, m)
        Row and column player's payoffs (validated by the caller).
    initial_label : int in [0, n + m)
        The label dropped first; different labels can reach different equilibria.
    max_pivots : int, optional
        Pivot budget (default ``50 * (n + m) + 1000``); exceeding it raises SolverError.
    tol : float
        Pivot tolerance on the shifted, rescaled tableaux.

    Returns
    -------
    (x, y) : mixtures of shapes (n,) and (m,). Not yet verified: :func:`solvers.nash` checks
    and refines them.
    """
    A, B = as_payoffs([A, B])
    if A.ndim != 2:
        raise PayoffError(f"Lemke-Howson needs two matrices; got arrays of {A.ndim} axes")
    n, m = A.shape
    if not 0 <= initial_label < n + m:
        raise OptionError(f"initial_label must be in [0, {n + m}); got {initial_label}")
    # Map each player's payoffs onto [1, 2] (a positive affine map: equilibria are unchanged),
    # so that pivots compare differences of order 1 whatever the payoffs' scale and offset.
    A, B = _onto_one_two(A), _onto_one_two(B)
    xs = list(range(n))
    ys = list(range(n, n + m))
    rs = list(range(n + m, 2 * n + m))
    ss = list(range(2 * n + m, 2 * n + 2 * m))
    P = _Tableau(A, ys, rs)  # A y + r = 1
    Q = _Tableau(B.T, xs, ss)  # B^T x + s = 1

    def complement(var: int) -> int:
        # x_i <-> r_i and y_j <-> s_j: a variable and its slack are n + m apart
        return var + n + m if var < n + m else var - (n + m)

    def label(var: int) -> int:
        return var if var < n + m else var - (n + m)

    budget = max_pivots if max_pivots is not None else 50 * (n + m) + 1000
    entering = initial_label  # x_k (label k < n) enters Q; y_j (label n + j) enters P
    for _ in range(budget):
        tableau = Q if entering < n or entering >= 2 * n + m else P
        leaving = tableau.pivot(entering, tol)
        if label(leaving) == initial_label:
            break
        entering = complement(leaving)
    else:
        raise SolverError(f"Lemke-Howson did not finish within {budget} pivots")
    x = Q.values(range(0, n))
    y = P.values(range(n, n + m))
    if x.sum() <= 0 or y.sum() <= 0:
        raise SolverError("Lemke-Howson ended at the artificial equilibrium")
    return np.clip(x, 0, None) / x.sum(), np.clip(y, 0, None) / y.sum()
