"""Which restricted-game solver and which expansion an ``xdo`` run gets when it names none
(:mod:`psro.algorithms.xdo`): the fastest measured for its game, oracle and target
(``experiments/bench_tree_solvers.py --xdo-only``; docs: variants/xdo.md)."""

from __future__ import annotations

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame

LARGE_GAME_INFOSETS = 10_000
"""Information sets of a player from which a run with a target exploitability of at least
``CFR_TARGET`` times the largest return defaults to ``"cfr"`` (see :func:`default_solver`)."""
SMALL_GAME_INFOSETS = 100
"""Information sets of a player from which, and below ``IMPROVING_INFOSETS``, such a run
defaults to ``"cfr"`` too (Leduc, 468: exploitability 1e-3, 7.7e-5 of its largest return, in
0.12 s against the LP's 0.21 s; Kuhn, 6, stays with the LP: 0.002 in 0.012 s against
0.013 s)."""
IMPROVING_INFOSETS = 1_000
"""Information sets of a player from which the LP with the exact oracle grows by improving
actions by default (:func:`default_expansion`)."""
CFR_TARGET = 7e-5
"""Least target exploitability, times the largest return, at which ``"cfr"`` is the default on a
game of the sizes above. Where the two cross, side by side (``python
experiments/bench_tree_solvers.py --solvers dcfr --xdo lp-responses cfr --skip-openspiel
--budget 30 --thresholds 1e-3,5e-4,2e-4,1e-4,5e-5,2e-5,1e-5 --games leduc_poker
liars_dice``): on liar's dice (largest return 1) growing by responses, CFR+ takes 14.9 s to
1e-4 and 21.7 s to 5e-5, the LP 19.2 s to an exact equilibrium; on Leduc (13), CFR+ 0.12 s
to 1e-3 and 0.15 s to 5e-4 (3.8e-5 of 13, below this: the LP), 0.42 s to 1e-4, the LP 0.21 s."""
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


def large(tree: SequenceFormGame) -> bool:
    """Whether a player has at least ``LARGE_GAME_INFOSETS`` information sets."""
    return most_infosets(tree) >= LARGE_GAME_INFOSETS


def dense(tree: SequenceFormGame) -> bool:
    """Whether two-player ``tree``'s sequence-form payoff matrix has at least
    ``DENSE_PAYOFF_ROW`` nonzero entries per row of player 0's sequences."""
    payoff = tree.payoff_matrices()[0]
    return payoff.nnz >= DENSE_PAYOFF_ROW * payoff.shape[0]


def default_solver(tree: SequenceFormGame, zero_sum: bool,
                   target_exploitability: float | None = None, improving: bool = False) -> str:
    """The restricted-game solver a run gets when it names none, the fastest measured
    (``experiments/bench_tree_solvers.py --xdo-only``): ``"cfr"`` (warm-started CFR+) outside
    two-player zero-sum games, where it is the only one; in them ``"cfr"`` on a game whose
    LPs are slow (:func:`dense`), whatever the target (Leduc with 13 ranks: exploitability
    1e-3 in 5.7 s and 1e-4 in 11.4 s, where the LP growing by improving actions was at 1.7e-3
    after 205 s; for a tighter target, the whole game's LP by interior point, ``psro
    solve-tree``, takes 33 s); else ``"lp"`` where the restricted game may grow by improving
    actions (``improving``: the exact oracle and no expansion named but ``"improving"``;
    liar's dice to 1e-3: 1.35 s, CFR+ 2.2 s), else ``"cfr"`` on a game with at least
    ``LARGE_GAME_INFOSETS`` information sets of a player run to a target exploitability of at
    least ``CFR_TARGET`` times its largest return (liar's dice to 1e-4: 14.9 s, the LP
    growing by responses 19.2 s), or with at least ``SMALL_GAME_INFOSETS`` and fewer than
    ``IMPROVING_INFOSETS`` (Leduc to 1e-3: 0.12 s, the LP 0.21 s), else ``"lp"``, exact (Kuhn
    to 0.002: 0.012 s, CFR+ 0.013 s; growing by responses on goofspiel 5, 1,062 information
    sets, to 1e-3: 0.21 s, CFR+ 0.30 s; on goofspiel 4 with imperfect information, 1,804:
    0.29 s, CFR+ 0.35 s; and to tighter targets on every game measured, where a CFR-family
    solver's tolerance has to go on halving: liar's dice to 5e-5 above)."""
    if tree.num_players != 2 or not zero_sum:
        return "cfr"
    if dense(tree):
        return "cfr"
    cfr_sized = large(tree) or SMALL_GAME_INFOSETS <= most_infosets(tree) < IMPROVING_INFOSETS
    if not improving and cfr_sized and target_exploitability is not None and \
            target_exploitability >= CFR_TARGET * return_scale(tree):
        return "cfr"
    return "lp"


def default_expansion(tree: SequenceFormGame, solver: str, exact_oracle: bool) -> str:
    """The ``xdo_expansion`` a run gets when it names none, the faster measured
    (``experiments/bench_tree_solvers.py --xdo-only``): ``"improving"`` with the LP and the
    exact oracle on a game with at least ``IMPROVING_INFOSETS`` information sets of a player
    (exact equilibrium: goofspiel 5 0.10 s against 0.19 s, liar's dice 1.35 s against 13.4 s);
    ``"responses"`` elsewhere (Leduc: 0.19 s against 0.26 s; a trained oracle's responses
    are what extend its restricted game)."""
    many = most_infosets(tree) >= IMPROVING_INFOSETS
    return "improving" if solver == "lp" and exact_oracle and many else "responses"


__all__ = ["CFR_TARGET", "DENSE_PAYOFF_ROW", "IMPROVING_INFOSETS", "LARGE_GAME_INFOSETS",
           "SMALL_GAME_INFOSETS", "default_expansion", "default_solver", "dense", "large",
           "most_infosets", "return_scale"]
