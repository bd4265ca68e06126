"""Nash equilibria of two-player games: one verified equilibrium, or every one enumeration finds.

``nash`` methods:

- ``"auto"``: the zero-sum LP when ``A + B`` is constant (within 1e-9 of the payoff scale),
  else ``"lemke_howson"``.
- ``"lemke_howson"``: our lexicographic Lemke-Howson (:mod:`solvers.lemke_howson`), trying
  dropped labels with growing pivot budgets (path lengths are heavy-tailed), then pygambit's
  C++ LCP solver as a fallback.
- ``"support_enumeration"``: our own, tolerance-based (nashpy's compares floats exactly and
  misses equilibria of random games); ``"vertex_enumeration"``: nashpy's. The first found.
- ``"zero_sum"``: the LP of :func:`solvers.zero_sum.zero_sum_nash`; constant-sum games only.

Every returned equilibrium is verified: NashConv <= ``NASH_RTOL * max(|A|, |B|)``.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from solvers.errors import OptionError, SolverError
from solvers.lemke_howson import lemke_howson
from solvers.metrics import nash_conv
from solvers.validation import PayoffError, as_payoffs, constant_sum, payoff_scale
from solvers.zero_sum import _equalise_on_support, zero_sum_nash

NASH_RTOL = 1e-8
"""Tolerance of :func:`nash`: NashConv of the result <= ``NASH_RTOL * max(|A|, |B|)``."""

NASH_METHODS = ("auto", "lemke_howson", "support_enumeration", "vertex_enumeration", "zero_sum")
EQUILIBRIA_METHODS = ("support_enumeration", "vertex_enumeration")

_PIVOT_BUDGETS = (64, 512, 4096, 32768)


def _bimatrix(payoffs) -> tuple[np.ndarray, np.ndarray]:
    arrays = as_payoffs(payoffs)
    if len(arrays) != 2:
        raise PayoffError(
            f"nash and equilibria solve two-player games; this game has {len(arrays)} players. "
            f"For N players use an iterative solver (prd, replicator, fictitious_play, "
            f"regret_matching), alpharank, ce or cce."
        )
    return arrays[0], arrays[1]


def _refine(A: np.ndarray, B: np.ndarray, x: np.ndarray, y: np.ndarray):
    """Solve the indifference equations on the supports of (x, y) and keep the better pair."""
    best = (x, y)
    gap = nash_conv([A, B], [x, y])
    if gap > 0:
        # x must make the column player (payoffs B) indifferent on y's support, and y the row
        # player (payoffs A) on x's support; _equalise_on_support solves each on a matrix M
        # for "x^T M constant on T" and "M y constant on S".
        x_new, _ = _equalise_on_support(B, x, y)
        _, y_new = _equalise_on_support(A, x, y)
        if nash_conv([A, B], [x_new, y_new]) < gap:
            best = (x_new, y_new)
    return best


def _lemke_howson_search(A: np.ndarray, B: np.ndarray, tol: float):
    n, m = A.shape
    last_error = None
    for budget in _PIVOT_BUDGETS:
        for label in range(n + m):
            try:
                x, y = lemke_howson(A, B, initial_label=label, max_pivots=budget)
            except SolverError as err:
                last_error = err
                continue
            x, y = _refine(A, B, x, y)
            if nash_conv([A, B], [x, y]) <= tol:
                return x, y
    try:
        return _gambit_lcp(A, B)
    except ImportError:
        raise SolverError(f"Lemke-Howson failed from every label ({last_error}) and pygambit "
                          f"is not installed for the fallback") from None


def _gambit_lcp(A: np.ndarray, B: np.ndarray):
    import pygambit as gbt

    game = gbt.Game.from_arrays(A, B)
    result = gbt.nash.lcp_solve(game, rational=False, stop_after=1)
    if not result.equilibria:
        raise SolverError("pygambit's LCP solver returned no equilibrium")
    eq = result.equilibria[0]
    players = list(game.players)
    x = np.array([float(eq[s]) for s in players[0].strategies])
    y = np.array([float(eq[s]) for s in players[1].strategies])
    return x / x.sum(), y / y.sum()


def _solve_indifference(M: np.ndarray) -> np.ndarray | None:
    """Mixture z (k,) with ``M z`` constant and ``sum z = 1``, or None when singular."""
    k = M.shape[1]
    lhs = np.zeros((M.shape[0] + 1, k + 1))
    lhs[:-1, :k] = M
    lhs[:-1, k] = -1.0
    lhs[-1, :k] = 1.0
    rhs = np.zeros(M.shape[0] + 1)
    rhs[-1] = 1.0
    try:
        sol = np.linalg.solve(lhs, rhs)
    except np.linalg.LinAlgError:
        return None
    return sol[:k]


def _support_enumeration(A: np.ndarray, B: np.ndarray, tol: float):
    """All equilibria on equal-size supports (Nisan et al. 2007, Algorithm 3.4).

    Unlike nashpy's version, whose best-response test compares floats for exact equality and
    so misses equilibria of random games, candidates are accepted within ``tol``.
    """
    n, m = A.shape
    for k in range(1, min(n, m) + 1):
        for rows in itertools.combinations(range(n), k):
            for cols in itertools.combinations(range(m), k):
                y_part = _solve_indifference(A[np.ix_(rows, cols)])
                x_part = _solve_indifference(B[np.ix_(rows, cols)].T)
                if y_part is None or x_part is None:
                    continue
                if (y_part < -tol).any() or (x_part < -tol).any():
                    continue
                x = np.zeros(n)
                y = np.zeros(m)
                x[list(rows)] = np.clip(x_part, 0, None)
                y[list(cols)] = np.clip(y_part, 0, None)
                x /= x.sum()
                y /= y.sum()
                if nash_conv([A, B], [x, y]) <= tol:
                    yield x, y


def _enumerate(A: np.ndarray, B: np.ndarray, method: str, tol: float):
    if method == "support_enumeration":
        return list(_support_enumeration(A, B, tol))
    import nashpy

    with warnings.catch_warnings():
        # nashpy warns about degenerate games; every candidate is verified by the caller.
        warnings.simplefilter("ignore")
        try:
            found = list(nashpy.Game(A, B).vertex_enumeration())
        except Exception as err:  # nashpy's polytope code fails on some degenerate games
            raise SolverError(f"nashpy's vertex enumeration failed on this "
                              f"{A.shape[0]}x{A.shape[1]} game: {type(err).__name__}: "
                              f"{err}") from None
    return [(np.asarray(x, float), np.asarray(y, float)) for x, y in found]


def nash(payoffs, method: str = "auto") -> list[np.ndarray]:
    """One Nash equilibrium of a two-player game, verified.

    Parameters
    ----------
    payoffs : [A, B] with A, B of shape (n, m), or a single matrix A meaning [A, -A].
    method : one of ``NASH_METHODS`` (see the module docstring).

    Returns
    -------
    [x, y] : the row player's mixture (n,) and the column player's (m,).

    Raises
    ------
    PayoffError
        Bad payoffs, more than two players, or ``"zero_sum"`` on a game that is not
        constant-sum.
    OptionError
        An unknown method.
    SolverError
        No equilibrium within ``NASH_RTOL * max(|A|, |B|)`` NashConv could be found.
    """
    if method not in NASH_METHODS:
        raise OptionError(f"unknown nash method {method!r}; accepted: {', '.join(NASH_METHODS)}")
    A, B = _bimatrix(payoffs)
    tol = NASH_RTOL * payoff_scale([A, B])
    c = constant_sum([A, B])
    if method == "zero_sum" and c is None:
        raise PayoffError("method 'zero_sum' needs a constant-sum game; A + B is not constant")
    if method in ("auto", "zero_sum") and c is not None:
        x, y, _ = zero_sum_nash(A)
        return [x, y]
    if min(A.shape) == 1:  # one player has a single strategy: the other best-responds
        if A.shape[0] == 1:
            return [np.ones(1), np.eye(A.shape[1])[int(np.argmax(B[0]))]]
        return [np.eye(A.shape[0])[int(np.argmax(A[:, 0]))], np.ones(1)]
    if method in ("auto", "lemke_howson"):
        x, y = _lemke_howson_search(A, B, tol)
        candidates = [(x, y)]
    else:
        candidates = _enumerate(A, B, method, tol)
    for x, y in candidates:
        x, y = _refine(A, B, x, y)
        if nash_conv([A, B], [x, y]) <= tol:
            return [x, y]
    raise SolverError(f"{method} found no equilibrium within NashConv {tol:.3g}")


def equilibria(payoffs, method: str = "support_enumeration") -> list[list[np.ndarray]]:
    """Every Nash equilibrium that an enumeration finds, each verified and deduplicated.

    ``"support_enumeration"`` (ours, equal-size supports) finds every equilibrium of a
    non-degenerate game; ``"vertex_enumeration"`` (nashpy) pairs the vertices of the
    best-response polytopes, which gives every extreme equilibrium of a non-degenerate game
    only: in degenerate games it can miss extreme equilibria, even pure ones (a test shows a
    5 x 7 game of 0/1 payoffs where it misses three pure equilibria that support enumeration
    finds). Neither method promises every equilibrium of a degenerate game. Cost grows
    exponentially with the number of strategies: meant for games up to about 10 x 10.
    Returns a list of ``[x, y]`` pairs, each with NashConv <= ``NASH_RTOL * max(|A|, |B|)``.
    """
    if method not in EQUILIBRIA_METHODS:
        raise OptionError(
            f"unknown equilibria method {method!r}; accepted: {', '.join(EQUILIBRIA_METHODS)}"
        )
    A, B = _bimatrix(payoffs)
    tol = NASH_RTOL * payoff_scale([A, B])
    found: list[list[np.ndarray]] = []
    for x, y in _enumerate(A, B, method, tol):
        if nash_conv([A, B], [x, y]) > tol:
            continue
        if any(np.allclose(x, fx, atol=1e-9) and np.allclose(y, fy, atol=1e-9)
               for fx, fy in found):
            continue
        found.append([x, y])
    return found
