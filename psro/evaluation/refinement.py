"""Which sampled payoff entries the meta-strategy depends on, and so are worth more episodes.

A sampled table can be filled coarsely first (``monte_carlo.refine = "support"``: every new
entry gets ``min_episodes``) and refined afterwards, only where the meta-solver's answer can
depend on the entry. Player p's view of the meta-game is its *deviation values*: member k's
return against the other players' mixtures, ``d_p[k] = sum over profiles with i_p = k of
prod_{q != p} w_q[i_q] * values[p][profile]``. An entry therefore reaches player p only when
every other player's member in it has positive weight, and it matters there when player p's
member

- is in p's support (``w_p[k] > 0``): the entry sets the equilibrium's values and weights; or
- *contends*: its deviation value could reach p's meta value ``w_p . d_p`` within the 95%
  interval of its own estimate (``d_p[k] + Z95 * se(d_p[k]) >= w_p . d_p``), so that better
  estimates could make it a profitable deviation and change the support.

Any other entry moves no deviation value that could change the answer (to first order: an
equilibrium-type meta-solver's answer is fixed by its support's values and the deviations
that could enter it). Such entries stay coarse until a later meta-strategy makes them matter.
"""

from __future__ import annotations

import numpy as np

from psro.evaluation.monte_carlo import Z95
from psro.payoffs import PayoffTable, deviation_values


def coarse_entries(table: PayoffTable, tolerance: float, max_episodes: int) -> np.ndarray:
    """Boolean mask (K_0, ..., K_{N-1}): entries some player's 95% half-width of which is
    above ``tolerance`` while fewer than ``max_episodes`` episodes stand behind them (entries
    more episodes could still sharpen)."""
    wide = (Z95 * table.std_errs > tolerance).any(axis=0)
    return wide & (table.counts < max_episodes)


def relevant_entries(table: PayoffTable, mixtures: list[np.ndarray]) -> np.ndarray:
    """Boolean mask (K_0, ..., K_{N-1}): the entries the meta-strategy ``mixtures`` (one
    weight vector per player, as long as its population) depends on, by the module's rule."""
    n, shape = table.num_players, table.shape
    relevant = np.zeros(shape, dtype=bool)
    for p in range(n):
        others = np.ones(shape, dtype=bool)
        for q in range(n):
            if q != p:
                others &= _along(mixtures[q] > 0, q, n)
        matters = (mixtures[p] > 0) | _contending(table, mixtures, p)
        relevant |= others & _along(matters, p, n)
    return relevant


def entries_to_refine(table: PayoffTable, mixtures: list[np.ndarray], tolerance: float,
                      max_episodes: int) -> list[tuple[int, ...]]:
    """The profiles (index tuples, in row-major order) that are both coarse and relevant."""
    mask = coarse_entries(table, tolerance, max_episodes) & relevant_entries(table, mixtures)
    return [tuple(int(i) for i in index) for index in np.argwhere(mask)]


def _contending(table: PayoffTable, mixtures: list[np.ndarray], player: int) -> np.ndarray:
    """Boolean (K_player,): members whose deviation value's 95% upper bound reaches the
    player's meta value."""
    values = deviation_values(table.values[player], player, mixtures)
    squared = [np.square(w) for w in mixtures]
    spread = np.sqrt(deviation_values(np.square(table.std_errs[player]), player, squared))
    meta_value = float(np.dot(mixtures[player], values))
    return values + Z95 * spread >= meta_value - 1e-12


def _along(vector: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """``vector`` shaped to broadcast along ``axis`` of an ``ndim``-dimensional array."""
    shape = [1] * ndim
    shape[axis] = len(vector)
    return np.asarray(vector).reshape(shape)


__all__ = ["coarse_entries", "entries_to_refine", "relevant_entries"]
