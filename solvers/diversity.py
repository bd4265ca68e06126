"""Population diversity as the expected cardinality of a determinantal point process (DPP).

Perez-Nieves et al. (2021, "Modelling Behavioural Diversity for Learning in Open-Ended Games")
measure the diversity of a population by the payoff rows of its members: with ``M`` the
``(k, m)`` matrix whose row i is member i's payoffs against the m opponents (or opponent
profiles), the L-ensemble DPP with kernel ``L = M M^T`` picks subsets of members with
probability proportional to ``det(L_Y)``, and its expected cardinality

    ``E|Y| = trace(I - (L + I)^{-1}) = sum_i lambda_i / (lambda_i + 1)``

(``lambda_i`` the eigenvalues of ``L``) is the population's diversity: 0 for an empty or
all-zero population, at most ``rank(M)``, growing with members whose payoff rows are long
and point in new directions. Duplicates add little; a member whose row is a copy of another's
adds less than a member whose row is orthogonal to every other. The measure is not scale-free:
rows are divided by ``scale`` first (the game's largest absolute payoff, say), so that the
values of games with different stakes can be compared.

Results are exact up to floating-point rounding: relative error about ``1e-12`` for
well-conditioned ``L + I`` (its eigenvalues are at least 1, so it is always invertible).
"""

from __future__ import annotations

import numpy as np

from solvers.errors import PayoffError


def _rows(rows: np.ndarray, scale: float) -> np.ndarray:
    matrix = np.asarray(rows, float)
    if matrix.ndim != 2:
        raise PayoffError(f"payoff rows must be a 2-D array (members x opponents); got shape "
                          f"{matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise PayoffError("payoff rows must be finite")
    if not np.isfinite(scale) or scale <= 0:
        raise PayoffError(f"scale must be a positive number; got {scale!r}")
    return matrix / scale


def expected_cardinality(rows: np.ndarray, scale: float = 1.0) -> float:
    """The expected size of a DPP sample with kernel ``L = M M^T``, ``M = rows / scale``.

    ``rows``: shape ``(k, m)``, row i member i's payoffs against m opponents (``k = 0`` gives
    0). Returns ``trace(I - (L + I)^{-1})``, in ``[0, min(k, m)]``.
    :class:`~solvers.PayoffError` for a non-2-D or non-finite array or a scale that is not
    positive.
    """
    matrix = _rows(rows, scale)
    if matrix.shape[0] == 0:
        return 0.0
    # The eigenvalues of M M^T and M^T M agree apart from zeros: use the smaller Gram matrix.
    gram = matrix @ matrix.T if matrix.shape[0] <= matrix.shape[1] else matrix.T @ matrix
    eigenvalues = np.clip(np.linalg.eigvalsh(gram), 0.0, None)
    return float(np.sum(eigenvalues / (eigenvalues + 1.0)))


def _joined(rows: np.ndarray, new_row: np.ndarray, scale: float
            ) -> tuple[np.ndarray, np.ndarray, float]:
    """The joined rows over ``scale``, ``(L + I)^{-1}`` and ``trace(I - (L + I)^{-1})``."""
    matrix = _rows(np.vstack([np.asarray(rows, float).reshape(-1, np.size(new_row)),
                              np.asarray(new_row, float)[None, :]]), scale)
    inverse = np.linalg.inv(matrix @ matrix.T + np.eye(matrix.shape[0]))
    return matrix, inverse, float(matrix.shape[0] - np.trace(inverse))


def joined_cardinality(rows: np.ndarray, new_row: np.ndarray, scale: float = 1.0) -> float:
    """The diversity of the population ``rows`` joined by a member of payoff row ``new_row``
    (both divided by ``scale``): the value of :func:`cardinality_gradient`, bit for bit,
    without the gradient's matrix products."""
    return _joined(rows, new_row, scale)[2]


def cardinality_gradient(rows: np.ndarray, new_row: np.ndarray, scale: float = 1.0
                         ) -> tuple[float, np.ndarray]:
    """The diversity of the population ``rows`` joined by a member of payoff row ``new_row``,
    and its gradient with respect to that row.

    ``rows``: shape ``(k, m)``; ``new_row``: shape ``(m,)``, in the same units (both are
    divided by ``scale``). Returns ``(E|Y|, d E|Y| / d new_row)``, the gradient of shape
    ``(m,)`` in the units of ``new_row`` (per unit of payoff, not of payoff / scale). With
    ``L = M M^T`` for the joined ``M`` and ``K = (L + I)^{-1}``, the gradient of
    ``trace(I - K)`` with respect to ``M`` is ``2 K^2 M``; its last row is returned.
    """
    matrix, inverse, value = _joined(rows, new_row, scale)
    gradient = 2.0 * (inverse @ inverse @ matrix)[-1] / scale
    return value, gradient


def population_rows(payoffs: list[np.ndarray], player: int) -> np.ndarray:
    """Player ``player``'s members' payoff rows in a payoff table (the payoff convention:
    ``payoffs[p][i_0, ..., i_{N-1}]``): shape ``(K_player, prod of the other K_q)``, row i
    member i's payoffs against every profile of the other players' members (C order)."""
    table = np.moveaxis(np.asarray(payoffs[player], float), player, 0)
    return table.reshape(table.shape[0], -1)


def population_diversity(payoffs: list[np.ndarray], scale: float = 1.0) -> list[float]:
    """:func:`expected_cardinality` of each player's members' payoff rows
    (:func:`population_rows`) in a payoff table, one value per player."""
    return [expected_cardinality(population_rows(payoffs, p), scale)
            for p in range(len(payoffs))]


__all__ = ["cardinality_gradient", "expected_cardinality", "joined_cardinality",
           "population_diversity", "population_rows"]
