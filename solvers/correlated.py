"""Correlated (CE) and coarse correlated (CCE) equilibria of N-player games by LP, with the
equilibrium selection used by JPSRO (Marris et al. 2021): maximum entropy or maximum Gini.

A correlated distribution ``sigma`` over pure profiles (an array of the game's shape) is

- a **CE** when no player gains by deviating from a recommended strategy ``i`` to ``j``:
  ``sum_{a: a_p = i} sigma(a) (u_p(j, a_-p) - u_p(a)) <= 0`` for every p, i != j;
- a **CCE** when no player gains by ignoring the recommendation and playing ``j``:
  ``sum_a sigma(a) (u_p(j, a_-p) - u_p(a)) <= 0`` for every p, j.

Tolerance: the returned distribution's largest constraint violation (``max_gain``) is at most
``CE_RTOL * max|u|``.
"""

from typing import NamedTuple

import numpy as np

from solvers.errors import OptionError, SolverError
from solvers.selection import select
from solvers.validation import as_joint, as_payoffs, payoff_scale

CE_RTOL = 1e-8
"""Tolerance of the CE/CCE solvers: largest deviation gain <= CE_RTOL * max|u|."""

OBJECTIVES = ("entropy", "gini", "welfare")


MAX_CONSTRAINT_CELLS = 100_000_000
"""Largest dense constraint matrix (constraints x profiles, 800 MB) the CE/CCE LPs build."""


class CorrelatedEquilibrium(NamedTuple):
    """``joint`` has the game's shape and sums to 1; ``marginals`` are its per-player
    marginals; ``max_gain`` is the largest deviation gain (<= 0 up to tolerance)."""

    joint: np.ndarray
    marginals: list[np.ndarray]
    max_gain: float


def _deviation_rows(arrays: list[np.ndarray], coarse: bool) -> np.ndarray:
    """Matrix G with one row per deviation constraint ``G @ sigma.ravel() <= 0``."""
    shape = arrays[0].shape
    rows = []
    for p, u in enumerate(arrays):
        moved = np.moveaxis(u, p, 0)  # (n_p, rest...)
        n_p = shape[p]
        for j in range(n_p):
            # gain[a] = u_p(j, a_-p) - u_p(a), laid out on the original axes.
            gain = np.moveaxis(np.broadcast_to(moved[j], moved.shape) - moved, 0, p)
            if coarse:
                rows.append(gain.ravel())
                continue
            for i in range(n_p):
                if i == j:
                    continue
                mask = np.zeros(shape, dtype=bool)
                index = [slice(None)] * len(shape)
                index[p] = i
                mask[tuple(index)] = True
                rows.append(np.where(mask, gain, 0.0).ravel())
    return np.array(rows) if rows else np.zeros((0, int(np.prod(shape))))


def _solve(payoffs, objective: str, coarse: bool) -> CorrelatedEquilibrium:
    if objective not in OBJECTIVES:
        raise OptionError(f"unknown objective {objective!r}; accepted: {', '.join(OBJECTIVES)}")
    arrays = as_payoffs(payoffs)
    shape = arrays[0].shape
    rows = sum(n if coarse else n * (n - 1) for n in shape)
    cells = rows * int(np.prod(shape))
    if cells > MAX_CONSTRAINT_CELLS:
        raise SolverError(f"the {'coarse ' if coarse else ''}correlated-equilibrium LP of a "
                          f"{' x '.join(map(str, shape))} game has {rows:,} constraints over "
                          f"{int(np.prod(shape)):,} profiles ({cells:,} matrix entries); the "
                          f"limit is {MAX_CONSTRAINT_CELLS:,}")
    scale = payoff_scale(arrays)
    G = _deviation_rows(arrays, coarse) / scale
    h = np.zeros(G.shape[0])
    welfare = np.sum(arrays, axis=0).ravel() / scale
    if G.shape[0] == 0:  # every player has one strategy
        s = np.ones(1)
    else:
        s = select(G, h, objective, welfare)
    max_gain = float((G @ s).max() * scale) if G.shape[0] else 0.0
    if max_gain > CE_RTOL * scale:
        kind = "CCE" if coarse else "CE"
        raise SolverError(f"{kind} solution misses its tolerance: max gain {max_gain:.3g} > "
                          f"{CE_RTOL * scale:.3g}")
    joint = s.reshape(arrays[0].shape)
    n = joint.ndim
    marginals = [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]
    return CorrelatedEquilibrium(joint, marginals, max_gain)


def correlated_equilibrium(payoffs, objective: str = "entropy") -> CorrelatedEquilibrium:
    """A correlated equilibrium selected by ``objective`` (``"entropy"``, ``"gini"`` or
    ``"welfare"``); see the module docstring for the constraints and tolerance."""
    return _solve(payoffs, objective, coarse=False)


def coarse_correlated_equilibrium(payoffs, objective: str = "entropy") -> CorrelatedEquilibrium:
    """A coarse correlated equilibrium selected by ``objective``; see the module docstring."""
    return _solve(payoffs, objective, coarse=True)


def correlated_gains(payoffs, joint, coarse: bool = False) -> np.ndarray:
    """Every CE (or, with ``coarse=True``, CCE) deviation gain of a joint distribution.

    ``joint`` has the game's shape and sums to 1 (:func:`~solvers.validation.as_joint`:
    :class:`~solvers.PayoffError` otherwise). Returns a 1-D array; the distribution is an
    equilibrium of that kind exactly when every entry is <= 0.
    """
    arrays = as_payoffs(payoffs)
    joint = as_joint(joint, arrays[0].shape)
    return _deviation_rows(arrays, coarse) @ joint.ravel()
