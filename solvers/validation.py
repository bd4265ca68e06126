"""Input checks shared by every solver.

A *game* is a list of per-player payoff arrays: ``payoffs[p][i_0, ..., i_{N-1}]`` is player
p's payoff when player q plays its strategy ``i_q``. All arrays share one shape
``(n_0, ..., n_{N-1})`` with one axis per player. A single 2-D array ``A`` stands for the
two-player zero-sum game ``[A, -A]``.

A *mixture* is a 1-D array of non-negative numbers summing to 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers.errors import PayoffError

MIXTURE_SUM_TOL = 1e-6
"""How far from 1 a supplied mixture may sum before it is refused."""

MAX_PAYOFF = 1e300
"""Largest absolute payoff accepted: the solvers take differences of payoffs and sum them
over iterations, which overflow a 64-bit float near its largest value (1.8e308): regret
matching returned NaN mixtures at 1e307 and the CE LP failed at 1e308. Any payoff up to this
bound gives finite mixtures from every solver."""


def _as_float_array(value, what: str) -> np.ndarray:
    try:
        complex_entries = np.iscomplexobj(value)
    except (ValueError, TypeError):  # ragged: the conversion below names it
        complex_entries = False
    if complex_entries:
        raise PayoffError(f"{what} has complex entries; payoffs must be real numbers")
    try:
        array = np.asarray(value, dtype=float)
    except OverflowError:
        raise PayoffError(f"{what} has entries too large for a 64-bit float") from None
    except (ValueError, TypeError) as err:
        raise PayoffError(
            f"{what} is not a rectangular array of numbers (ragged rows or non-numeric "
            f"entries): {err}"
        ) from None
    return array


def check_payoff_values(array: np.ndarray, what: str) -> np.ndarray:
    """The one check of payoff values every public solver applies: ``array`` must be finite
    and at most :data:`MAX_PAYOFF` in absolute value; :class:`PayoffError` naming ``what``
    otherwise. Returns ``array``."""
    if not np.all(np.isfinite(array)):
        bad = "NaN" if np.isnan(array).any() else "infinite"
        raise PayoffError(f"{what} contains {bad} entries; payoffs must be finite")
    largest = float(np.abs(array).max()) if array.size else 0.0
    if largest > MAX_PAYOFF:
        raise PayoffError(f"{what} has an entry of absolute value {largest:.3g}; payoffs must "
                          f"be at most {MAX_PAYOFF:.0e} in absolute value (rescale the game: "
                          f"equilibria do not change)")
    return array


def as_payoffs(payoffs) -> list[np.ndarray]:
    """Validate a game and return it as a list of float arrays, one per player.

    Accepts a 2-D array ``A`` (read as the zero-sum game ``[A, -A]``) or a sequence of N arrays,
    each with N axes and the same shape. Raises :class:`PayoffError` (a ``ValueError``) for
    anything else: NaN or infinite entries, entries past :data:`MAX_PAYOFF` in absolute
    value, empty axes, ragged rows, mismatched shapes, or a number of axes that differs from
    the number of players.
    """
    if isinstance(payoffs, (str, bytes)) or not isinstance(payoffs, (np.ndarray, Sequence)):
        raise PayoffError(
            f"payoffs must be a 2-D array or a list of per-player arrays; got "
            f"{type(payoffs).__name__}"
        )
    if isinstance(payoffs, np.ndarray) or (
        len(payoffs) > 0 and _ndim(payoffs[0]) < 2
    ):
        matrix = _as_float_array(payoffs, "the payoff matrix")
        if matrix.ndim != 2:
            raise PayoffError(
                f"a single payoff array must be a 2-D matrix (the zero-sum game [A, -A]); got "
                f"{matrix.ndim} axes. For N players pass a list of N arrays with N axes each."
            )
        arrays = [matrix, -matrix]
    else:
        if len(payoffs) < 2:
            raise PayoffError(
                f"a game needs payoffs for at least 2 players; got {len(payoffs)} array(s)"
            )
        arrays = [_as_float_array(a, f"payoffs[{p}]") for p, a in enumerate(payoffs)]
    n_players = len(arrays)
    shape = arrays[0].shape
    for p, array in enumerate(arrays):
        if array.ndim != n_players:
            raise PayoffError(
                f"payoffs[{p}] has {array.ndim} axes but there are {n_players} players; each "
                f"player's array needs one axis per player"
            )
        if array.shape != shape:
            raise PayoffError(
                f"payoffs[{p}] has shape {array.shape} but payoffs[0] has shape {shape}; all "
                f"players' arrays must have the same shape"
            )
        if array.size == 0:
            raise PayoffError(f"payoffs[{p}] is empty (shape {array.shape}); every player needs "
                              f"at least one strategy")
        check_payoff_values(array, f"payoffs[{p}]")
    return arrays


def _ndim(value) -> int:
    """Number of axes of an array or nested list; 0 when it cannot be read as an array."""
    try:
        return np.ndim(value)
    except ValueError:  # ragged nesting: let the array conversion report it
        return 2


def _check_distribution(array: np.ndarray, what: str) -> None:
    """PayoffError unless ``array``'s entries are finite, non-negative (to -1e-12) and sum to
    1 within ``MIXTURE_SUM_TOL``."""
    if not np.all(np.isfinite(array)):
        raise PayoffError(f"{what} contains NaN or infinite entries")
    if np.any(array < -1e-12):
        raise PayoffError(f"{what} has negative entries (min {array.min():.3g})")
    total = array.sum()
    if abs(total - 1.0) > MIXTURE_SUM_TOL:
        raise PayoffError(f"{what} sums to {total:.9g}, not 1")


def as_mixture(mixture, size: int, what: str = "mixture") -> np.ndarray:
    """Validate one mixture of length ``size``; returns it as floats renormalised to sum to 1.

    Raises :class:`PayoffError` when it is not 1-D, has the wrong length, has NaN, infinite or
    negative entries, or sums further than ``MIXTURE_SUM_TOL`` from 1.
    """
    array = _as_float_array(mixture, what)
    if array.ndim != 1:
        raise PayoffError(f"{what} must be a 1-D array; got shape {array.shape}")
    if array.shape[0] != size:
        raise PayoffError(f"{what} has length {array.shape[0]} but the player has {size} "
                          f"strategies")
    _check_distribution(array, what)
    array = np.clip(array, 0.0, None)
    return array / array.sum()


def as_mixtures(mixtures, shape: tuple[int, ...]) -> list[np.ndarray]:
    """Validate one mixture per player for a game of the given shape."""
    if isinstance(mixtures, np.ndarray) and mixtures.ndim == 1:
        raise PayoffError("mixtures must be a list with one 1-D mixture per player")
    try:
        count = len(mixtures)
    except TypeError:
        raise PayoffError("mixtures must be a list with one 1-D mixture per player") from None
    if count != len(shape):
        raise PayoffError(f"got {count} mixtures for a game of {len(shape)} players")
    pairs = enumerate(zip(mixtures, shape, strict=True))
    return [as_mixture(m, n, f"mixtures[{p}]") for p, (m, n) in pairs]


def as_joint(joint, shape: tuple[int, ...] | None = None, what: str = "joint") -> np.ndarray:
    """Validate a joint distribution over pure profiles (an array with one axis per player,
    of the game's ``shape`` where given); returns it as a float array, its values unchanged.

    Raises :class:`PayoffError` when it has no axis or no entry, another shape, NaN, infinite
    or negative entries, or sums further than ``MIXTURE_SUM_TOL`` from 1.
    """
    array = _as_float_array(joint, what)
    if array.ndim == 0 or array.size == 0:
        raise PayoffError(f"{what} must be an array with one axis per player and at least one "
                          f"entry; got shape {array.shape}")
    if shape is not None and array.shape != tuple(shape):
        raise PayoffError(f"{what} has shape {array.shape}; the game has shape {tuple(shape)}")
    _check_distribution(array, what)
    return array


def payoff_scale(payoffs: Sequence[np.ndarray]) -> float:
    """The largest absolute payoff, at least 1e-300: tolerances are stated relative to it."""
    return max(max(float(np.abs(a).max()) for a in payoffs), 1e-300)


def constant_sum(payoffs: Sequence[np.ndarray], rtol: float = 1e-9) -> float | None:
    """The constant ``c`` if the payoffs sum to ``c`` at every profile (within ``rtol`` of the
    payoff scale), else None. Detection is by tolerance, never exact equality."""
    total = np.sum(payoffs, axis=0)
    c = float(total.mean())
    if float(np.abs(total - c).max()) <= rtol * payoff_scale(payoffs):
        return c
    return None
