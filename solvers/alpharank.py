"""alpha-rank (Omidshafiei et al. 2019) for N-player games, multi-population form.

States are pure strategy profiles. From a profile ``s``, one player k (chosen uniformly among
the players and alternative strategies) proposes a mutant strategy ``t``; it fixates in
player k's population of size ``m`` with the Moran-process probability::

    rho = (1 - exp(-alpha * f)) / (1 - exp(-alpha * m * f)),   f = u_k(t, s_-k) - u_k(s)

(``1 / m`` when ``f = 0``). The stationary distribution ``pi`` of this Markov chain ranks the
profiles; the meta-strategy of player k is pi's marginal on k's strategies.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.errors import OptionError
from solvers.iterative import _check_positive_int, _check_range
from solvers.validation import as_payoffs

_DENSE_LIMIT = 4000
"""Profiles up to which the stationary distribution is found by a dense solve."""


class AlphaRank(NamedTuple):
    """``stationary`` has the game's shape (a distribution over pure profiles); ``marginals``
    is each player's marginal of it, a list of 1-D mixtures."""

    stationary: np.ndarray
    marginals: list[np.ndarray]


def _fixation(f: np.ndarray, alpha: float, m: int) -> np.ndarray:
    """Moran fixation probability, computed without overflow for any sign and size of f."""
    out = np.full(f.shape, 1.0 / m)
    pos = f > 0
    neg = f < 0
    a = alpha * f[pos]
    out[pos] = -np.expm1(-a) / -np.expm1(-m * a)
    g = -alpha * f[neg]  # > 0
    # (e^{g} - 1) / (e^{m g} - 1) = e^{-(m-1) g} (1 - e^{-g}) / (1 - e^{-m g})
    out[neg] = np.exp(-(m - 1) * g) * (-np.expm1(-g)) / (-np.expm1(-m * g))
    return out


def alpharank(payoffs, alpha: float = 100.0, population_size: int = 50,
              perturbation: float = 1e-10) -> AlphaRank:
    """alpha-rank stationary distribution and per-player marginals.

    Parameters
    ----------
    payoffs : a game (list of N arrays with N axes; see :mod:`solvers.validation`). Payoffs
        are used as given (not rescaled): ``alpha`` is relative to their units.
    alpha : ranking intensity > 0; large values approach the infinite-alpha ranking.
    population_size : Moran population size m >= 2.
    perturbation : probability in [0, 1e-3] of a uniform jump added to every transition, so
        the chain has a unique stationary distribution even when large ``alpha`` makes it
        reducible in floating point.

    Returns
    -------
    AlphaRank(stationary, marginals). The stationary distribution solves ``pi C = pi`` to a
    residual below 1e-10.

    Cost: the chain has one state per pure profile (``prod n_k``); up to 4000 profiles a dense
    solve takes about a second, beyond that a sparse LU whose fill-in grows fast (9261 profiles,
    a 21 x 21 x 21 game, take minutes).
    """
    arrays = as_payoffs(payoffs)
    alpha = _check_range(alpha, "alpha", 0.0, np.inf, lo_open=True)
    m = _check_positive_int(population_size, "population_size")
    if m < 2:
        raise OptionError("population_size must be at least 2")
    perturbation = _check_range(perturbation, "perturbation", 0.0, 1e-3)
    shape = arrays[0].shape
    n_states = int(np.prod(shape))
    eta = 1.0 / sum(n - 1 for n in shape) if sum(n - 1 for n in shape) > 0 else 1.0
    states = np.arange(n_states)
    index = np.array(np.unravel_index(states, shape))  # (N, n_states)
    rows, cols, vals = [], [], []
    for k, n_k in enumerate(shape):
        own = arrays[k].ravel()
        for t in range(n_k):
            target_index = index.copy()
            target_index[k] = t
            targets = np.ravel_multi_index(target_index, shape)
            moving = index[k] != t
            f = own[targets[moving]] - own[states[moving]]
            rows.append(states[moving])
            cols.append(targets[moving])
            vals.append(eta * _fixation(f, alpha, m))
    rows = np.concatenate(rows) if rows else np.zeros(0, int)
    cols = np.concatenate(cols) if cols else np.zeros(0, int)
    vals = np.concatenate(vals) if vals else np.zeros(0)
    C = sp.csr_matrix((vals, (rows, cols)), shape=(n_states, n_states))
    stay = 1.0 - np.asarray(C.sum(axis=1)).ravel()
    C = C + sp.diags(stay)
    if perturbation > 0:
        # pi = (1 - e) pi C + e / S  <=>  pi ((1 - e) C - I) = -e / S
        system = ((1 - perturbation) * C - sp.identity(n_states)).T
        rhs = np.full(n_states, -perturbation / n_states)
    else:
        system = (C - sp.identity(n_states)).T.tolil()
        system[0, :] = 1.0
        rhs = np.zeros(n_states)
        rhs[0] = 1.0
    if n_states <= _DENSE_LIMIT:  # dense LU: fast, and no fill-in trouble
        pi = np.linalg.solve(system.toarray(), rhs)
    else:  # sparse LU; cost grows steeply with the number of profiles
        pi = spla.spsolve(system.tocsc(), rhs)
    pi = np.clip(np.atleast_1d(pi), 0.0, None)
    pi /= pi.sum()
    stationary = pi.reshape(shape)
    marginals = []
    for k in range(len(shape)):
        axes = tuple(q for q in range(len(shape)) if q != k)
        marginals.append(stationary.sum(axis=axes))
    return AlphaRank(stationary, marginals)
