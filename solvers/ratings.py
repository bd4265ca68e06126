"""Ratings of a population: Elo from win rates or payoffs, and Nash averaging."""

from typing import NamedTuple

import numpy as np
from scipy.optimize import minimize

from solvers.errors import OptionError
from solvers.selection import select
from solvers.validation import PayoffError, _as_float_array, check_payoff_values
from solvers.zero_sum import _as_matrix, zero_sum_nash

ELO_WIN_RATE_CLIP = 1e-3
"""Win rates are clipped to [ELO_WIN_RATE_CLIP, 1 - ELO_WIN_RATE_CLIP] before fitting, so a
policy that always wins gets a finite rating (rating gaps stay below about 1200 Elo)."""


def elo_ratings(matrix, kind: str = "win_rate", observed=None) -> np.ndarray:
    """Elo ratings fitted to a square matrix of pairwise results; shape ``(n,)``, mean 0.

    Parameters
    ----------
    matrix : array (n, n)
        ``kind="win_rate"``: ``matrix[i, j]`` is the probability that i beats j (draws count
        half), in [0, 1]. ``kind="payoff"``: ``matrix[i, j]`` is i's payoff against j in a
        zero-sum contest, mapped to a win rate by ``(matrix + M) / (2 M)`` with
        ``M = max|matrix|`` (so 0 is an even contest). The diagonal is ignored.
    observed : bool array (n, n), optional
        Which pairs were actually played; others are ignored (e.g. the two seats' populations
        of a PSRO table, where only cross-seat pairs exist). Default: every off-diagonal pair.

    Returns the maximum-likelihood ratings under Elo's model
    ``P(i beats j) = 1 / (1 + 10 ** ((r_j - r_i) / 400))``, centred on 0. Exact (to 1e-6 Elo)
    when the win rates are consistent with the model.
    """
    W = _as_float_array(matrix, "the win-rate matrix")
    if W.ndim != 2 or W.shape[0] != W.shape[1] or W.size == 0:
        raise PayoffError(f"Elo needs a non-empty square matrix; got shape {W.shape}")
    check_payoff_values(W, "the win-rate matrix")
    if kind == "payoff":
        M = float(np.abs(W).max()) or 1.0
        W = (W + M) / (2 * M)
    elif kind == "win_rate":
        if W.min() < 0 or W.max() > 1:
            raise PayoffError("win rates must lie in [0, 1]; pass kind='payoff' for payoffs")
    else:
        raise OptionError(f"unknown kind {kind!r}; accepted: win_rate, payoff")
    n = W.shape[0]
    if n == 1:
        return np.zeros(1)
    W = np.clip(W, ELO_WIN_RATE_CLIP, 1 - ELO_WIN_RATE_CLIP)
    off = ~np.eye(n, dtype=bool)
    if observed is not None:
        observed = np.asarray(observed, dtype=bool)
        if observed.shape != W.shape:
            raise PayoffError(f"observed has shape {observed.shape}; expected {W.shape}")
        off &= observed
    k = np.log(10) / 400

    def loss(r):
        d = k * (r[:, None] - r[None, :])
        p = 1 / (1 + np.exp(-d))
        nll = -(W * np.log(p) + (1 - W) * np.log1p(-p))[off].sum()
        g = np.where(off, p - W, 0.0)
        grad = k * (g.sum(axis=1) - g.sum(axis=0))
        return nll, grad

    # Pin the mean at 0 (ratings are defined up to a shift).
    def regularised(r):
        value, grad = loss(r)
        total = r.sum()
        return value + total * total, grad + 2 * total

    res = minimize(regularised, np.zeros(n), jac=True, method="L-BFGS-B",
                   options={"ftol": 1e-15, "gtol": 1e-10, "maxiter": 10000})
    return res.x - res.x.mean()


class NashAveraging(NamedTuple):
    """Maximum-entropy Nash equilibrium ``(row, col)`` of the zero-sum game and the ratings it
    induces: ``row_ratings = A @ col`` (each row agent's payoff against the column Nash) and
    ``col_ratings = -A.T @ row``."""

    row: np.ndarray
    col: np.ndarray
    row_ratings: np.ndarray
    col_ratings: np.ndarray


def nash_averaging(A) -> NashAveraging:
    """Nash averaging (Balduzzi et al. 2018) of the zero-sum evaluation matrix ``A``.

    For an antisymmetric agent-versus-agent matrix (``A = -A.T``, e.g. log-odds or payoffs of a
    symmetric zero-sum contest), ``row == col`` is the maximum-entropy Nash of the meta-game and
    ``row_ratings`` are the Nash-averaged skills: invariant to adding copies of an agent. For a
    general matrix (agents versus tasks, or the two seats of a PSRO payoff table) each side is
    rated against the other side's maximum-entropy Nash.

    The Nash is found by LP; among all equilibria the maximum-entropy one is selected by the
    dual method of :mod:`solvers.selection`. Each mixture's worst-case payoff is within
    1e-8 * max|A| of the game's value.
    """
    A = _as_matrix(A)
    _, _, value = zero_sum_nash(A)
    scale = max(float(np.abs(A).max()), 1e-300)
    slack = 1e-9  # relative: the LP's value is itself accurate to about 1e-10
    # Row mixtures guaranteeing the value: -(A^T x) <= -value.
    row = select(-A.T / scale, np.full(A.shape[1], -value / scale + slack), "entropy")
    # Column mixtures holding the row player to the value: A y <= value.
    col = select(A / scale, np.full(A.shape[0], value / scale + slack), "entropy")
    return NashAveraging(row, col, A @ col, -A.T @ row)
