"""alpha-rank (Omidshafiei et al. 2019) for N-player games, multi-population form.

States are pure strategy profiles. From a profile ``s``, one player k (chosen uniformly among
the players and alternative strategies) proposes a mutant strategy ``t``; it fixates in
player k's population of size ``m`` with the Moran-process probability::

    rho = (1 - exp(-alpha * f)) / (1 - exp(-alpha * m * f)),   f = u_k(t, s_-k) - u_k(s)

(``1 / m`` when ``f = 0``). The stationary distribution ``pi`` of this Markov chain ranks the
profiles; the meta-strategy of player k is pi's marginal on k's strategies.

At large ``alpha`` many transitions are far below 1e-300 (``exp(-alpha (m - 1) |f|)``): in
floating point the chain falls apart into pieces whose relative weights those tiny numbers
decide. The stationary distribution is therefore computed by Grassmann-Taksar-Heyman state
reduction (only additions of positive terms, so no cancellation): on the probabilities
themselves where every transition is above ``exp(-200)`` (up to ``GTH_LIMIT`` profiles), on
their logarithms otherwise (no underflow; up to ``LOG_GTH_LIMIT`` profiles). Larger games use a
sparse linear solve, checked by its residual.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from solvers.errors import OptionError, SolverError
from solvers.iterative import _check_positive_int, _check_range
from solvers.validation import as_payoffs

GTH_LIMIT = 1500
"""Profiles up to which GTH runs on the transition probabilities (cubic cost: about 2 s at
the limit on one core)."""
LOG_GTH_LIMIT = 600
"""Profiles up to which GTH runs on log-probabilities when transitions underflow (about 3 s at
the limit)."""
MAX_PROFILES = 20_000
"""Largest chain solved (a sparse LU's fill-in makes larger ones take far too long)."""
_LOG_FLOOR = -200.0
"""Below this log-probability a transition is handled in log space."""


class AlphaRank(NamedTuple):
    """``stationary`` has the game's shape (a distribution over pure profiles); ``marginals``
    is each player's marginal of it, a list of 1-D mixtures."""

    stationary: np.ndarray
    marginals: list[np.ndarray]


def _log_fixation(f: np.ndarray, alpha: float, m: int) -> np.ndarray:
    """log of the Moran fixation probability, finite for any sign and size of f (no overflow,
    no underflow). With ``g = -alpha f > 0``:
    ``(e^g - 1) / (e^{m g} - 1) = e^{-(m - 1) g} (1 - e^{-g}) / (1 - e^{-m g})``."""
    out = np.full(f.shape, -np.log(m))
    pos, neg = f > 0, f < 0
    a = alpha * f[pos]
    out[pos] = np.log(-np.expm1(-a)) - np.log(-np.expm1(-m * a))
    g = -alpha * f[neg]
    out[neg] = -(m - 1) * g + np.log(-np.expm1(-g)) - np.log(-np.expm1(-m * g))
    return out


def _gth(p: np.ndarray) -> np.ndarray:
    """Stationary distribution of an irreducible chain from its off-diagonal transition
    probabilities, by GTH state reduction."""
    P = p.copy()
    n = len(P)
    for k in range(n - 1, 0, -1):
        out = P[k, :k].sum()
        if out <= 0:
            raise SolverError("the alpha-rank chain is reducible: no stationary distribution "
                              "is unique")
        P[:k, k] /= out
        P[:k, :k] += np.outer(P[:k, k], P[k, :k])
    pi = np.zeros(n)
    pi[0] = 1.0
    for k in range(1, n):
        pi[k] = pi[:k] @ P[:k, k]
    return pi / pi.sum()


def _log_gth(log_p: np.ndarray) -> np.ndarray:
    """Stationary distribution of an irreducible chain from the logarithms of its off-diagonal
    transition probabilities (-inf where there is no transition), by GTH state reduction."""
    L = log_p.copy()
    n = len(L)
    for k in range(n - 1, 0, -1):
        log_out = np.logaddexp.reduce(L[k, :k])  # mass leaving k towards lower states
        if not np.isfinite(log_out):
            raise SolverError("the alpha-rank chain is reducible: no stationary distribution "
                              "is unique")
        column = L[:k, k] - log_out
        L[:k, :k] = np.logaddexp(L[:k, :k], column[:, None] + L[k, :k][None, :])
        L[:k, k] = column
    log_pi = np.zeros(n)
    for k in range(1, n):
        log_pi[k] = np.logaddexp.reduce(log_pi[:k] + L[:k, k])
    return np.exp(log_pi - np.logaddexp.reduce(log_pi))


def alpharank(payoffs, alpha: float = 100.0, population_size: int = 50,
              perturbation: float = 0.0) -> AlphaRank:
    """alpha-rank stationary distribution and per-player marginals.

    Parameters
    ----------
    payoffs : a game (list of N arrays with N axes; see :mod:`solvers.validation`). Payoffs
        are used as given (not rescaled): ``alpha`` is relative to their units.
    alpha : ranking intensity > 0; large values approach the infinite-alpha ranking.
    population_size : Moran population size m >= 2.
    perturbation : opt-in probability in [0, 1e-3] of a uniform jump mixed into every
        transition (it changes the answer wherever transitions are smaller than it; 0, the
        default, computes alpha-rank itself).

    Returns
    -------
    AlphaRank(stationary, marginals). By GTH reduction (up to ``GTH_LIMIT`` profiles, or
    ``LOG_GTH_LIMIT`` where transitions underflow) the stationary distribution is within 1e-9
    relative of a 40-digit reference whatever ``alpha`` (tests); beyond, a sparse solve whose
    residual is checked (``SolverError`` when the chain is too ill-conditioned in floating
    point: pass a ``perturbation`` or a smaller ``alpha``).

    Cost: the chain has one state per pure profile (``prod n_k``); GTH is cubic in that, the
    sparse LU's fill-in grows fast beyond (9261 profiles, a 21 x 21 x 21 game, take minutes).
    """
    arrays = as_payoffs(payoffs)
    alpha = _check_range(alpha, "alpha", 0.0, np.inf, lo_open=True)
    m = _check_positive_int(population_size, "population_size")
    if m < 2:
        raise OptionError("population_size must be at least 2")
    perturbation = _check_range(perturbation, "perturbation", 0.0, 1e-3)
    shape = arrays[0].shape
    n_states = int(np.prod(shape))
    if n_states > MAX_PROFILES:
        raise SolverError(f"alpha-rank of a {' x '.join(map(str, shape))} game has "
                          f"{n_states:,} profiles; the limit is {MAX_PROFILES:,}")
    eta = 1.0 / sum(n - 1 for n in shape) if sum(n - 1 for n in shape) > 0 else 1.0
    states = np.arange(n_states)
    index = np.array(np.unravel_index(states, shape))  # (N, n_states)
    rows, cols, log_vals = [], [], []
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
            log_vals.append(_log_fixation(f, alpha, m))
    rows = np.concatenate(rows) if rows else np.zeros(0, int)
    cols = np.concatenate(cols) if cols else np.zeros(0, int)
    log_rates = np.log(eta) + (np.concatenate(log_vals) if log_vals else np.zeros(0))
    vals = np.exp(log_rates)  # transition probabilities (0 where they underflow)
    if n_states == 1:
        pi = np.ones(1)
    elif perturbation == 0 and n_states <= GTH_LIMIT and \
            log_rates.min(initial=0.0) > _LOG_FLOOR:
        p = np.zeros((n_states, n_states))
        p[rows, cols] = vals
        pi = _gth(p)
    elif perturbation == 0 and n_states <= LOG_GTH_LIMIT:
        log_p = np.full((n_states, n_states), -np.inf)
        log_p[rows, cols] = log_rates
        pi = _log_gth(log_p)
    else:
        pi = _linear_stationary(rows, cols, vals, n_states, perturbation)
    stationary = pi.reshape(shape)
    marginals = []
    for k in range(len(shape)):
        axes = tuple(q for q in range(len(shape)) if q != k)
        marginals.append(stationary.sum(axis=axes))
    return AlphaRank(stationary, marginals)


def _linear_stationary(rows, cols, vals, n_states: int, perturbation: float) -> np.ndarray:
    """pi C = pi by a sparse solve (perturbed when asked), its residual checked."""
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
    try:
        pi = spla.spsolve(system.tocsc(), rhs)
    except RuntimeError as err:  # singular factor
        raise SolverError(f"alpha-rank's linear system is singular ({err}); pass a "
                          f"perturbation or a smaller alpha") from None
    pi = np.atleast_1d(pi)
    if not np.all(np.isfinite(pi)) or pi.sum() <= 0:
        raise SolverError("alpha-rank's linear system is singular in floating point; pass a "
                          "perturbation or a smaller alpha")
    pi = np.clip(pi, 0.0, None) / np.clip(pi, 0.0, None).sum()
    residual = np.abs(pi @ C - pi).max() if perturbation == 0 else 0.0
    if residual > 1e-9:
        raise SolverError(f"alpha-rank's stationary distribution misses pi C = pi by "
                          f"{residual:.2g}; pass a perturbation or a smaller alpha")
    return pi
