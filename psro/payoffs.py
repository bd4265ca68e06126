"""The empirical payoff table of a PSRO run, grown incrementally.

``values[p][i_0, ..., i_{N-1}]`` is player p's expected return when player q plays population
member ``i_q`` (the payoff convention of :mod:`solvers`). ``counts`` holds the number of
episodes behind each entry and ``std_errs`` (same shape as ``values``) their standard errors;
exact entries (computed in sequence form, no sampling) have count 0 and standard error 0, and
``exact`` is True.
"""

from __future__ import annotations

import numpy as np

from solvers.diversity import population_diversity as per_player


class PayoffTable:
    """Payoffs of every profile of population members; only new entries are ever evaluated."""

    def __init__(self, num_players: int, exact: bool = True):
        self.num_players = num_players
        self.exact = exact
        self.values = np.zeros((num_players,) + (0,) * num_players)
        self.counts = np.zeros((0,) * num_players, dtype=np.int64)
        self.std_errs = np.zeros((num_players,) + (0,) * num_players)
        self.refined: dict[tuple[int, ...], int] = {}
        """Sampled entries re-estimated after they were first filled: profile -> the
        iteration of its latest re-estimate (a run directory saves them with that
        iteration)."""

    @classmethod
    def from_arrays(cls, values: np.ndarray, counts: np.ndarray, std_errs: np.ndarray,
                    exact: bool) -> PayoffTable:
        """A table holding these arrays: ``values`` and ``std_errs`` of shape
        (num_players, K_0, ..., K_{N-1}), ``counts`` of shape (K_0, ..., K_{N-1}).
        ``ValueError`` when the shapes disagree."""
        values, std_errs = np.asarray(values, float), np.asarray(std_errs, float)
        counts = np.asarray(counts, np.int64)
        if values.ndim != counts.ndim + 1 or values.shape[0] != counts.ndim \
                or values.shape[1:] != counts.shape or std_errs.shape != values.shape:
            raise ValueError(f"payoff arrays of shapes {values.shape}, {counts.shape} and "
                             f"{std_errs.shape} do not form one table")
        table = cls(counts.ndim, exact)
        table.values, table.counts, table.std_errs = values, counts, std_errs
        return table

    def block(self, block: list[slice]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The values, counts and standard errors of one block of profiles."""
        index = tuple(block)
        return (self.values[(slice(None),) + index], self.counts[index],
                self.std_errs[(slice(None),) + index])

    @property
    def shape(self) -> tuple[int, ...]:
        """Population sizes, one per player."""
        return self.counts.shape

    def as_game(self) -> list[np.ndarray]:
        """The table as a list of per-player arrays, ready for a meta-solver."""
        return [self.values[p] for p in range(self.num_players)]

    @staticmethod
    def new_blocks(old: tuple[int, ...], new: tuple[int, ...]) -> list[list[slice]]:
        """Disjoint blocks of profile indices that cover exactly the entries new in ``new``:
        block q has player q's new members, earlier players' old ones and later players' all."""
        blocks = []
        for q in range(len(new)):
            if new[q] == old[q]:
                continue
            block = [slice(0, old[r]) for r in range(q)] + [slice(old[q], new[q])] + \
                    [slice(0, new[r]) for r in range(q + 1, len(new))]
            if all(s.stop > s.start for s in block):
                blocks.append(block)
        return blocks

    def grow(self, new_shape: tuple[int, ...], blocks: list[list[slice]],
             block_values: list[np.ndarray], block_counts: list[np.ndarray] | None = None,
             block_std_errs: list[np.ndarray] | None = None):
        """Enlarge the table to ``new_shape`` and fill the given blocks with their values
        (each of shape ``(num_players, *block_shape)``), keeping every old entry. Sampled blocks
        also give their episode counts and standard errors."""
        old = self.shape
        values = np.zeros((self.num_players,) + tuple(new_shape))
        errors = np.zeros((self.num_players,) + tuple(new_shape))
        counts = np.zeros(tuple(new_shape), dtype=np.int64)
        old_index = tuple(slice(0, k) for k in old)
        values[(slice(None),) + old_index] = self.values
        errors[(slice(None),) + old_index] = self.std_errs
        counts[old_index] = self.counts
        for i, (block, vals) in enumerate(zip(blocks, block_values, strict=True)):
            values[(slice(None),) + tuple(block)] = vals
            if block_counts is not None:
                counts[tuple(block)] = block_counts[i]
            if block_std_errs is not None:
                errors[(slice(None),) + tuple(block)] = block_std_errs[i]
        self.values, self.counts, self.std_errs = values, counts, errors

    def entry(self, profile: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        """One entry: per-player values (N,), standard errors (N,) and its episode count."""
        index = (slice(None),) + tuple(profile)
        return self.values[index].copy(), self.std_errs[index].copy(), int(self.counts[profile])

    def set_entry(self, profile: tuple[int, ...], values: np.ndarray, std_errs: np.ndarray,
                  count: int, iteration: int) -> None:
        """Replace one sampled entry by a re-estimate (with more episodes) made at
        ``iteration``."""
        profile = tuple(int(i) for i in profile)
        index = (slice(None),) + profile
        self.values[index], self.std_errs[index] = values, std_errs
        self.counts[profile] = count
        self.refined[profile] = iteration


def deviation_values(values_p: np.ndarray, player: int,
                     mixtures: list[np.ndarray]) -> np.ndarray:
    """Player ``player``'s return with each of its members against the others' ``mixtures``:
    ``values_p`` (K_0, ..., K_{N-1}) contracted with every other player's mixture (a mixture
    shorter than its axis is padded with zeros: members that joined after it was computed).
    Shape (K_player,)."""
    out = np.moveaxis(values_p, player, 0)
    for q in reversed(range(len(mixtures))):
        if q == player:
            continue
        axis = q + 1 if q < player else q
        weights = np.zeros(values_p.shape[q])
        weights[:len(mixtures[q])] = mixtures[q]
        out = np.tensordot(out, weights, axes=([axis], [0]))
    return out


def response_gains(table: PayoffTable, before: list[np.ndarray],
                   joined: list[list[int]]) -> list[float | None]:
    """Per player, what its best new member gains against the previous meta-strategy
    ``before`` over the previous meta-strategy's own value (the response's gain, against which
    an exact best response's gain is the most there was to find); None for a player with no
    new member. ``joined[p]`` lists the indices of player p's new members."""
    gains: list[float | None] = []
    for p in range(table.num_players):
        if not joined[p]:
            gains.append(None)
            continue
        values = deviation_values(table.values[p], p, before)
        base = float(np.dot(values[:len(before[p])], before[p]))
        gains.append(float(max(values[k] for k in joined[p])) - base)
    return gains


def utility_scale(game) -> float:
    """The largest absolute payoff of a pyspiel game (1 where both bounds are 0): the unit in
    which :func:`population_diversity` measures payoff rows."""
    return max(abs(game.max_utility()), abs(game.min_utility())) or 1.0


def population_diversity(table: PayoffTable, scale: float) -> dict:
    """Each player's population diversity in ``table``, as metrics-row columns
    ``diversity_p{p}``: the expected cardinality of the DPP over the player's members' payoff
    rows divided by ``scale`` (:func:`solvers.population_diversity`; between 0 and the number
    of members). None where the table holds entries that were not estimated."""
    n = table.num_players
    if table.values.size == 0 or not np.all(np.isfinite(table.values)):
        return {f"diversity_p{p}": None for p in range(n)}
    values = per_player(table.as_game(), scale)
    return {f"diversity_p{p}": value for p, value in enumerate(values)}
