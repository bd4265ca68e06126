"""Equilibrium metrics for N-player normal-form games: deviation gains, NashConv, exploitability.

Conventions (see :mod:`solvers.validation`): ``payoffs[p]`` has one axis per player and
``mixtures[p]`` is player p's mixture over the strategies on axis p.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from solvers.errors import PayoffError
from solvers.validation import _as_float_array, as_mixtures, as_payoffs, check_payoff_values


def action_values(payoff, mixtures: Sequence[np.ndarray], player: int) -> np.ndarray:
    """Expected payoff of each pure strategy of ``player`` against the other players' mixtures.

    ``payoff`` is one player's payoff tensor of shape ``(n_0, ..., n_{N-1})``; the result has
    shape ``(n_player,)``. :class:`PayoffError` for payoffs that are not finite or exceed
    :data:`~solvers.validation.MAX_PAYOFF`, mixtures that are not distributions over the
    axes, or a player that is not one of them.
    """
    payoff = check_payoff_values(_as_float_array(payoff, "payoff"), "payoff")
    if payoff.ndim == 0 or isinstance(player, bool) or not isinstance(player, (int, np.integer)) \
            or not 0 <= player < payoff.ndim:
        raise PayoffError(f"player must be from 0 to {payoff.ndim - 1}; got {player!r}")
    mix = as_mixtures(mixtures, payoff.shape)
    return _action_values(payoff, mix, player)


def _action_values(payoff: np.ndarray, mixtures: Sequence[np.ndarray], player: int
                   ) -> np.ndarray:
    """:func:`action_values` without checks (the inner loop of every iterative solver: its
    callers validate once with :func:`~solvers.validation.as_payoffs`)."""
    values = payoff
    # Contract from the last axis down, so the remaining axes keep their positions.
    for q in range(payoff.ndim - 1, -1, -1):
        if q != player:
            values = np.tensordot(values, mixtures[q], axes=([q], [0]))
    return values


def _expected_and_best(arrays, mix):
    expected = np.empty(len(arrays))
    best = np.empty(len(arrays))
    for p, payoff in enumerate(arrays):
        values = _action_values(payoff, mix, p)
        expected[p] = float(values @ mix[p])
        best[p] = float(values.max())
    return expected, best


def expected_payoffs(payoffs, mixtures) -> np.ndarray:
    """Each player's expected payoff under independent mixtures; shape ``(N,)``."""
    arrays = as_payoffs(payoffs)
    mix = as_mixtures(mixtures, arrays[0].shape)
    return _expected_and_best(arrays, mix)[0]


def deviation_gains(payoffs, mixtures) -> np.ndarray:
    """Per-player gain from the best unilateral deviation to a pure strategy; shape ``(N,)``.

    ``gains[p] = max_i u_p(i, x_-p) - u_p(x)``; every entry is >= 0 up to rounding, and all are
    0 exactly at a Nash equilibrium.
    """
    arrays = as_payoffs(payoffs)
    mix = as_mixtures(mixtures, arrays[0].shape)
    expected, best = _expected_and_best(arrays, mix)
    return np.maximum(best - expected, 0.0)


def nash_conv(payoffs, mixtures) -> float:
    """NashConv: the sum over players of :func:`deviation_gains`. Zero exactly at a Nash
    equilibrium; in a two-player zero-sum game it is the duality gap."""
    return float(deviation_gains(payoffs, mixtures).sum())


def exploitability(payoffs, mixtures) -> float:
    """OpenSpiel's exploitability: NashConv divided by the number of players."""
    arrays = as_payoffs(payoffs)
    return nash_conv(arrays, mixtures) / len(arrays)
