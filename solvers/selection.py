"""Select one distribution from a polytope ``{s in simplex : G s <= h}``.

Shared by the correlated-equilibrium solvers and Nash averaging: maximum entropy and maximum
Gini impurity (``1 - sum s^2``) are solved through their smooth duals with L-BFGS-B (the form
used by JPSRO's MECE/MGCE solvers), then *polished*: a linear programme finds the feasible point
nearest in L1 to the dual's answer, so the constraints hold to HiGHS's tolerance whatever the
dual's accuracy. A maximum-welfare selection (``max c . s``) is a plain LP.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog, minimize
from scipy.special import logsumexp, softmax

from solvers.errors import SolverError

_HIGHS_OPTIONS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def _project_simplex(v: np.ndarray) -> np.ndarray:
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - 1.0
    rho = np.flatnonzero(u - css / np.arange(1, v.size + 1) > 0)[-1]
    return np.maximum(v - css[rho] / (rho + 1), 0.0)


def _max_entropy_dual(G: np.ndarray, h: np.ndarray) -> np.ndarray:
    def dual(lam):
        z = -G.T @ lam
        s = softmax(z)
        return logsumexp(z) + lam @ h, h - G @ s

    res = minimize(dual, np.zeros(G.shape[0]), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, None)] * G.shape[0],
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-12})
    return softmax(-G.T @ res.x)


def _max_gini_dual(G: np.ndarray, h: np.ndarray) -> np.ndarray:
    def negdual(lam):
        s = _project_simplex(-G.T @ lam)
        slack = G @ s - h
        return -(0.5 * s @ s + lam @ slack), -slack

    res = minimize(negdual, np.zeros(G.shape[0]), jac=True, method="L-BFGS-B",
                   bounds=[(0.0, None)] * G.shape[0],
                   options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-12})
    return _project_simplex(-G.T @ res.x)


def _nearest_feasible(s0: np.ndarray, G: np.ndarray, h: np.ndarray) -> np.ndarray:
    """argmin ||s - s0||_1 over {s in simplex : G s <= h}, by LP (variables s and t)."""
    S = s0.size
    eye = sp.identity(S, format="csr")
    A_ub = sp.vstack([
        sp.hstack([sp.csr_matrix(G), sp.csr_matrix((G.shape[0], S))]),
        sp.hstack([eye, -eye]),  # s - t <= s0
        sp.hstack([-eye, -eye]),  # -s - t <= -s0
    ], format="csr")
    c = np.concatenate([np.zeros(S), np.ones(S)])
    b_ub = np.concatenate([h, s0, -s0])
    A_eq = np.concatenate([np.ones(S), np.zeros(S)])[None, :]
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0.0, None)] * (2 * S), method="highs", options=_HIGHS_OPTIONS)
    if res.status != 0:
        raise SolverError(f"HiGHS could not find a feasible distribution: {res.message}")
    s = np.clip(res.x[:S], 0.0, None)
    return s / s.sum()


def select(G: np.ndarray, h: np.ndarray, objective: str, welfare: np.ndarray | None = None):
    """A distribution in ``{s >= 0, sum s = 1, G s <= h}`` chosen by ``objective``.

    ``objective``: ``"entropy"`` (maximum Shannon entropy), ``"gini"`` (maximum Gini
    impurity, i.e. minimum ``||s||^2``) or ``"welfare"`` (maximum ``welfare . s``, an LP).
    ``G`` and ``h`` should be scaled to about unit size by the caller. The constraints hold to
    about 1e-9; the objective is optimal up to the dual solver's accuracy (about 1e-6 relative).
    """
    if objective == "welfare":
        res = linprog(-welfare, A_ub=G, b_ub=h, A_eq=np.ones((1, G.shape[1])), b_eq=[1.0],
                      bounds=[(0.0, None)] * G.shape[1], method="highs",
                      options=_HIGHS_OPTIONS)
        if res.status != 0:
            raise SolverError(f"HiGHS could not solve the welfare LP: {res.message}")
        s = np.clip(res.x, 0.0, None)
        return s / s.sum()
    s0 = _max_entropy_dual(G, h) if objective == "entropy" else _max_gini_dual(G, h)
    if np.all(G @ s0 <= h + 1e-12):
        return s0
    return _nearest_feasible(s0, G, h)
