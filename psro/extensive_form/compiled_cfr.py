"""One restricted game's CFR-family run, compiled: :class:`CompiledRun` holds the run's state on
the restricted game's compact part (:func:`~psro.extensive_form.compact.compact_game`) and
iterates it with :mod:`psro.extensive_form.cfr_kernel`.
:class:`~psro.extensive_form.restricted_cfr.RestrictedCFR` runs two-player games through it
(and so :class:`~psro.extensive_form.tabular_cfr.TabularCFR` does, on the whole game); its
module docstring gives the speed-up, measured by ``experiments/bench_cfr_engines.py``.

The kernels compile on their first call in a fresh checkout (about 10 s, kept in numba's cache
beside the module) and load from the cache on the first call of each later process (about
0.3 s); :func:`load_kernels` does that up front, so that a benchmark times neither.
"""

from __future__ import annotations

import time

import numpy as np

from psro.extensive_form.cfr_kernel import (
    complete_sums,
    matched,
    nash_conv,
    plan_of,
    run_iterations,
)
from psro.extensive_form.cfr_variants import CFRVariant, variant_named
from psro.extensive_form.compact import CompactGame, compact_game, restriction_buffers
from psro.extensive_form.sequence_form import SequenceFormGame


class CompiledRun:
    """A CFR-family run on ``game``, the compact part of a restricted game of the two-player
    ``tree`` (:func:`~psro.extensive_form.compact.compact_game` of its allowed actions, or
    :func:`~psro.extensive_form.compact.restrict` of a larger compact game), started from
    ``regrets`` (each player's, by the tree's sequences; those of the compact part are copied)
    with a new average and ``t = 0``; the first iterate is regret matching on them."""

    def __init__(self, tree: SequenceFormGame, game: CompactGame, regrets: list[np.ndarray],
                 variant: CFRVariant):
        self.tree = tree
        self.game = game
        self.variant = variant
        self.t = 0
        self.regrets = [r[player.sequences].copy()
                        for r, player in zip(regrets, self.game.players, strict=True)]
        self.probs = [matched(r, player.start, player.end)
                      for r, player in zip(self.regrets, self.game.players, strict=True)]
        self.plans = [plan_of(q, player.start, player.end, player.parent)
                      for q, player in zip(self.probs, self.game.players, strict=True)]
        self.sums = [np.zeros(len(r)) for r in self.regrets]

    def _arrays(self) -> tuple:
        game, (a, b) = self.game, self.game.players
        return (game.leaf_seqs[0], game.leaf_seqs[1], game.leaf_weights[0],
                game.leaf_weights[1], a.start, a.end, a.parent, b.start, b.end, b.parent)

    def run(self, iterations: int) -> None:
        """``iterations`` more iterations (alternating updates, player 0 first)."""
        v = self.variant
        self.t = int(run_iterations(
            iterations, self.t, *self._arrays(), *self.regrets, *self.probs, *self.plans,
            *self.sums, v.plus, -1.0 if v.alpha is None else float(v.alpha),
            0.0 if v.beta is None else float(v.beta), float(v.gamma), v.predictive))

    def average_plans(self) -> list[np.ndarray]:
        """Each player's average realization plan on the compact part (entry 0 is 1; before
        the first iteration, the current plan)."""
        return [s / s[0] if s[0] > 0 else plan.copy()
                for s, plan in zip(self.sums, self.plans, strict=True)]

    def average_probs(self) -> list[np.ndarray]:
        """Each player's average policy by compact sequence: its average plan over its parent's
        (uniform over the information set's actions where the parent's is 0)."""
        out = []
        for plan, player in zip(self.average_plans(), self.game.players, strict=True):
            widths = player.end - player.start
            parent = np.repeat(plan[player.parent], widths)
            uniform = np.repeat(1.0 / np.maximum(widths, 1), widths)
            probs = np.ones(len(plan))
            probs[1:] = np.where(parent > 0, plan[1:] / np.where(parent > 0, parent, 1.0),
                                 uniform)
            out.append(probs)
        return out

    def nash_conv(self) -> float:
        """The restricted game's NashConv of the average profile."""
        return float(nash_conv(*self._arrays(), *self.average_plans()))

    def on_tree(self, player: int, values: np.ndarray) -> np.ndarray:
        """``player``'s values by compact sequence as an array by the tree's sequences (0 off
        the compact part)."""
        out = np.zeros(self.tree.players[player].num_sequences)
        out[self.game.players[player].sequences] = values
        return out

    def average_plans_on_tree(self) -> list[np.ndarray]:
        """Each player's :meth:`average_plans` by the tree's sequences (0 off the compact
        part)."""
        return [self.on_tree(p, plan) for p, plan in enumerate(self.average_plans())]

    def average_on_tree(self) -> tuple[list[np.ndarray], int]:
        """The run's average as :meth:`carry_average` takes it: each player's weighted sum of
        its iterates' plans by the tree's sequences (0 off the compact part), and ``t``."""
        return [self.on_tree(p, sums) for p, sums in enumerate(self.sums)], self.t

    def carry_average(self, average: tuple[list[np.ndarray], int]) -> None:
        """Continue, on this run's restricted game, the average of a run on a smaller one
        (``average``: that run's :meth:`average_on_tree`), instead of a new one: its sums and
        its ``t`` (which weights the next iterates, and discounts regrets in DCFR), completed
        by :func:`~psro.extensive_form.cfr_kernel.complete_sums` where the smaller game's
        players never reached (this run's first iterate there), so that the average stays a
        profile of realization plans."""
        sums, self.t = average
        for own, by_tree, probs, player in zip(self.sums, sums, self.probs,
                                               self.game.players, strict=True):
            own[:] = by_tree[player.sequences]
            complete_sums(own, probs, player.start, player.end, player.parent)

    def save_regrets(self, regrets: list[np.ndarray]) -> None:
        """Write the run's regrets into ``regrets`` (each player's, by the tree's sequences)."""
        for r, own, player in zip(regrets, self.regrets, self.game.players, strict=True):
            r[player.sequences] = own


def load_kernels() -> float:
    """Compile or load the kernels, the CFR family's and the tree double oracle's
    (:mod:`psro.extensive_form.double_oracle_kernel`), by a few iterations on Kuhn poker;
    returns the seconds it took."""
    import pyspiel

    start = time.perf_counter()
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    for variant in ("cfr+", "pcfr+"):
        run = CompiledRun(tree, compact_game(tree, legal),
                          [np.zeros(i.num_sequences) for i in tree.players],
                          variant_named(variant))
        run.run(2)
        run.nash_conv()
    run.carry_average(run.average_on_tree())
    _load_double_oracle_kernels(run.game)
    return time.perf_counter() - start


def _load_double_oracle_kernels(game: CompactGame) -> None:
    """One call of each of :mod:`psro.extensive_form.double_oracle_kernel`'s kernels."""
    from psro.extensive_form import double_oracle_kernel as kernel

    first, second = game.players
    size = len(first.sequences)
    plans = [kernel.uniform_plan(p.start, p.end, p.parent, len(p.sequences))
             for p in game.players]
    allowed = [np.ones(len(p.sequences), dtype=bool) for p in game.players]
    kernel.live_part(*game.leaf_seqs, *allowed, first.start, first.end, first.parent,
                     second.start, second.end, second.parent)
    kernel.restricted_part(*game.leaf_seqs, *game.leaf_weights, *allowed, first.start,
                           first.end, first.parent, second.start, second.end, second.parent,
                           game.leaves, *restriction_buffers(game))
    kernel.completed_plan(plans[0], allowed[0], first.start, first.end, first.parent)
    leaves = (game.leaf_seqs[0], game.leaf_seqs[1], game.leaf_weights[0], plans[1])
    kernel.best_actions(*leaves, first.start, first.end, first.parent,
                        np.zeros(size, dtype=bool))
    kernel.improving_actions(*leaves, plans[0], first.start, first.end, first.parent,
                             allowed[0], 1e-9, np.zeros(size, dtype=bool))


__all__ = ["CompiledRun", "load_kernels"]
