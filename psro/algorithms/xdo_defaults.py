"""Which restricted-game solver and which expansion an ``xdo`` run gets when it names none
(:mod:`psro.algorithms.xdo`): the fastest measured for its game, oracle and target
(``experiments/bench_tree_solvers.py --xdo-only``; docs: variants/xdo.md)."""

from __future__ import annotations

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame

IMPROVING_INFOSETS = 1_000
"""Information sets of a player from which the LP with the exact oracle grows by improving
actions by default (:func:`default_expansion`)."""
CFR_TARGET = 2e-6
"""Least target exploitability, times the game's largest return, at which ``"cfr"`` is the
default where the restricted game grows by responses. Where the two cross, side by side
(``python experiments/bench_tree_solvers.py --solvers dcfr --xdo lp-responses cfr pcfr dcfr
--skip-openspiel --budget 30 --thresholds 1e-3,5e-4,2e-4,1e-4,5e-5,2e-5,1e-5,1e-6 --games
leduc_poker liars_dice``): on Leduc (largest return 13) CFR+ takes 0.050 s to 1e-3, 0.14 s
to 5e-5, 0.24 s to 2e-5 (1.5e-6 of 13) and 0.35 s to 1e-5, the LP 0.25 s to an exact
equilibrium; on liar's dice (1) CFR+ 1.8 s to 1e-3 and 8.2 s to 1e-5, and not 1e-6 in 30 s,
the LP 19.4 s."""
CFR_TARGET_IMPROVING = 1e-3
"""The same where the LP would grow by improving actions (:func:`default_expansion`), whose
LPs reach an exact equilibrium in a few seconds: to 1e-3, CFR+ growing by responses takes
goofspiel 6 2.7 s (the LP 6.9 s), goofspiel 5 0.075 s (0.12 s), liar's dice 1.8 s (2.0 s) and
liar's dice 2x3 1.9 s (1.4 s); to 1e-4 the LP is ahead on each but goofspiel 6, where the two
are level (``python experiments/bench_tree_solvers.py --budget 30``, and ``--skip-openspiel``
with goofspiel 6 and liar's dice 2x3)."""
DENSE_PAYOFF_ROW = 20
"""Nonzero entries per row of player 0's sequence-form payoff matrix from which a two-player
zero-sum game's LPs count as slow (:func:`dense`): Leduc with 13 ranks has 30.7 (its whole LP
takes HiGHS's simplex 408 s), goofspiel 6 14.0 (12.4 s), liar's dice, goofspiel 5 and Leduc
5-6."""


def return_scale(tree: SequenceFormGame) -> float:
    """The largest absolute return of the game (CFR-family tolerances are relative to it)."""
    return max(float(np.abs(tree.leaf_returns).max()), 1e-12)


def most_infosets(tree: SequenceFormGame) -> int:
    """The most information sets any player of ``tree`` has (what the size rules read)."""
    return max(p.num_infosets for p in tree.players)


def many_infosets(tree: SequenceFormGame) -> bool:
    """Whether a player has at least ``IMPROVING_INFOSETS`` information sets."""
    return most_infosets(tree) >= IMPROVING_INFOSETS


def dense(tree: SequenceFormGame) -> bool:
    """Whether two-player ``tree``'s sequence-form payoff matrix has at least
    ``DENSE_PAYOFF_ROW`` nonzero entries per row of player 0's sequences."""
    payoff = tree.payoff_matrices()[0]
    return payoff.nnz >= DENSE_PAYOFF_ROW * payoff.shape[0]


def default_solver(tree: SequenceFormGame, zero_sum: bool,
                   target_exploitability: float | None = None, improving: bool = False) -> str:
    """The restricted-game solver a run gets when it names none, the fastest measured
    (``experiments/bench_tree_solvers.py``): ``"cfr"`` (warm-started CFR+) outside two-player
    zero-sum games, where it is the only one; in them ``"cfr"`` on a game whose LPs are slow
    (:func:`dense`), whatever the target (Leduc with 13 ranks: exploitability 1e-3 in 2.0 s,
    1e-4 in 3.4 s and 1e-6 in 45 s, where the LP growing by improving actions was at 1.7e-3
    after 205 s); else ``"cfr"`` for a target exploitability of at least ``CFR_TARGET`` times
    the game's largest return, or ``CFR_TARGET_IMPROVING`` times it where the LP would grow by
    improving actions (``improving``, the exact oracle with no expansion named but
    ``"improving"``, on a game of :func:`many_infosets`); else ``"lp"``, exact (Kuhn without a
    target: 0.014 s; to 1e-3 CFR+ is ahead, 0.009 s)."""
    if tree.num_players != 2 or not zero_sum:
        return "cfr"
    if dense(tree):
        return "cfr"
    least = CFR_TARGET_IMPROVING if improving and many_infosets(tree) else CFR_TARGET
    if target_exploitability is not None and \
            target_exploitability >= least * return_scale(tree):
        return "cfr"
    return "lp"


def default_expansion(tree: SequenceFormGame, solver: str, exact_oracle: bool) -> str:
    """The ``xdo_expansion`` a run gets when it names none, the faster measured
    (``experiments/bench_tree_solvers.py --xdo-only``): ``"improving"`` with the LP and the
    exact oracle on a game with at least ``IMPROVING_INFOSETS`` information sets of a player
    (exact equilibrium: goofspiel 5 0.12 s against 0.22 s, liar's dice 2.0 s against 18.7 s);
    ``"responses"`` elsewhere (Leduc: 0.24 s against 0.28 s; a trained oracle's responses
    are what extend its restricted game)."""
    many = many_infosets(tree)
    return "improving" if solver == "lp" and exact_oracle and many else "responses"


__all__ = ["CFR_TARGET", "CFR_TARGET_IMPROVING", "DENSE_PAYOFF_ROW", "IMPROVING_INFOSETS",
           "default_expansion", "default_solver", "dense", "many_infosets", "most_infosets",
           "return_scale"]
