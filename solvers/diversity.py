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
from solvers.validation import _as_float_array, check_payoff_values


def _rows(rows, scale: float, what: str = "payoff rows") -> np.ndarray:
    """``rows`` as a finite (k, m) float array divided by ``scale``; PayoffError otherwise."""
    matrix = _as_float_array(rows, what)
    if matrix.ndim != 2:
        raise PayoffError(f"{what} must be a 2-D array (members x opponents); got shape "
                          f"{matrix.shape}")
    check_payoff_values(matrix, what)
    if isinstance(scale, bool) or not isinstance(scale, (int, float, np.integer, np.floating)) \
            or not np.isfinite(scale) or scale <= 0:
        raise PayoffError(f"scale must be a positive number; got {scale!r}")
    return matrix / scale


def _gram(matrix: np.ndarray) -> np.ndarray:
    """``matrix @ matrix.T``; PayoffError where its entries overflow."""
    with np.errstate(over="ignore", invalid="ignore"):
        gram = matrix @ matrix.T
    if not np.all(np.isfinite(gram)):
        raise PayoffError("payoff rows are too large for their products to be finite; pass "
                          "scale (the game's largest absolute payoff, say)")
    return gram


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
    gram = _gram(matrix) if matrix.shape[0] <= matrix.shape[1] else _gram(matrix.T)
    eigenvalues = np.clip(np.linalg.eigvalsh(gram), 0.0, None)
    return float(np.sum(eigenvalues / (eigenvalues + 1.0)))


def _joined(rows: np.ndarray, new_row: np.ndarray, scale: float
            ) -> tuple[np.ndarray, np.ndarray, float]:
    """The joined rows over ``scale``, ``(L + I)^{-1}`` and ``trace(I - (L + I)^{-1})``."""
    new = _as_float_array(new_row, "new_row")
    if new.ndim != 1:
        raise PayoffError(f"new_row must be a 1-D array (one payoff per opponent); got shape "
                          f"{new.shape}")
    new = _rows(new[None, :], scale, "new_row")
    if np.size(rows) == 0:  # no members yet: [] or shape (0, m)
        matrix = new
    else:
        matrix = _rows(rows, scale)
        if matrix.shape[1] != new.shape[1]:
            raise PayoffError(f"payoff rows have {matrix.shape[1]} columns but new_row has "
                              f"{new.shape[1]} entries; both hold payoffs against the same "
                              f"opponents")
        matrix = np.vstack([matrix, new])
    inverse = np.linalg.inv(_gram(matrix) + np.eye(matrix.shape[0]))
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


def _table(payoffs: list[np.ndarray]) -> list[np.ndarray]:
    """A payoff table's arrays as floats; PayoffError unless each has one axis per player,
    they share one shape and their values pass :func:`check_payoff_values`."""
    if isinstance(payoffs, np.ndarray) or not isinstance(payoffs, (list, tuple)) \
            or not payoffs:
        raise PayoffError(f"payoffs must be a list of per-player arrays; got "
                          f"{type(payoffs).__name__}")
    tables = [check_payoff_values(_as_float_array(a, f"payoffs[{p}]"), f"payoffs[{p}]")
              for p, a in enumerate(payoffs)]
    if any(t.ndim != len(tables) or t.shape != tables[0].shape for t in tables):
        raise PayoffError(f"payoffs must be {len(tables)} arrays (one per player) of one shape "
                          f"with {len(tables)} axes each; got shapes "
                          f"{[t.shape for t in tables]}")
    return tables


def _rows_of(tables: list[np.ndarray], player: int) -> np.ndarray:
    table = np.moveaxis(tables[player], player, 0)
    return table.reshape(table.shape[0], -1)


def population_rows(payoffs: list[np.ndarray], player: int) -> np.ndarray:
    """Player ``player``'s members' payoff rows in a payoff table (the payoff convention:
    ``payoffs[p][i_0, ..., i_{N-1}]``): shape ``(K_player, prod of the other K_q)``, row i
    member i's payoffs against every profile of the other players' members (C order).
    :class:`~solvers.PayoffError` for a table whose arrays do not each have one axis per
    player and one shape, or a player that is not one of its players."""
    tables = _table(payoffs)
    if isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
            or not 0 <= player < len(tables):
        raise PayoffError(f"player must be from 0 to {len(tables) - 1}; got {player!r}")
    return _rows_of(tables, player)


def population_diversity(payoffs: list[np.ndarray], scale: float = 1.0) -> list[float]:
    """:func:`expected_cardinality` of each player's members' payoff rows
    (:func:`population_rows`) in a payoff table, one value per player.
    :class:`~solvers.PayoffError` as :func:`population_rows` and :func:`expected_cardinality`
    give it."""
    tables = _table(payoffs)
    return [expected_cardinality(_rows_of(tables, p), scale) for p in range(len(tables))]


__all__ = ["cardinality_gradient", "expected_cardinality", "joined_cardinality",
           "population_diversity", "population_rows"]
