"""Suggestions an algorithm declares for a run (``AlgorithmEntry.hint``), printed when the run
starts: plain PSRO on a two-player zero-sum game points to the variant measured to be faster
there."""

from __future__ import annotations

from psro import oracles
from psro.algorithms.anytime import ENTRY as ANYTIME


def plain_psro_hint(run) -> str | None:
    """A one-line suggestion where a run of ``psro`` is on a two-player zero-sum game: on an
    extensive-form game small enough to walk, ``xdo`` is the measured winner
    (docs/variants/xdo.md; not on a matrix game, one information set a player, where both are
    double oracle); on a game too large to walk, ``anytime`` with 128 episodes a regret-matching
    estimate, where the oracle can run its rounds (docs/variants/anytime.md)."""
    context, config = run.parts.context, run.config
    if context.game.num_players != 2 or not context.game.zero_sum:
        return None
    if context.tree is None:
        return _anytime_hint(config)
    if max(p.num_infosets for p in context.tree.players) < 2:
        return None
    if "trains" in oracles.get(config.oracle).capabilities:
        return ("hint: on two-player zero-sum games small enough to walk, --algorithm xdo "
                "needs far fewer trained best responses (PPO on Leduc: exploitability 0.002 "
                "after 140 s with default options; psro 0.23 after 10 minutes); see "
                "docs/variants/xdo.md")
    return ("hint: on two-player zero-sum games small enough to walk, --algorithm xdo reaches "
            "an exact equilibrium in far fewer iterations (exploitability 1e-3: Leduc 0.25 s, "
            "psro 32 s), and psro solve-tree GAME solves the whole game without a population "
            "(its LP: Leduc 0.09 s); see docs/variants/xdo.md")


def _anytime_hint(config) -> str | None:
    """The suggestion for a game too large to walk, where the run's oracle can do what anytime
    PSRO's regret matching needs of it (it asks the registries, not the oracle's name)."""
    if not ANYTIME.needs(config, False) <= \
            oracles.get(config.oracle).capabilities:
        return None
    return ("hint: on two-player zero-sum games too large to walk, --algorithm anytime "
            "--anytime-episodes 128 gave the least exploitable meta-policies at 10M env steps "
            "(phantom tic-tac-toe: lower bound 0.50, psro 0.76; dark hex 3: 0.002 both) and beat "
            "PPO self-play on every seed, in 1.3-2.6 times psro's wall time; see "
            "docs/variants/anytime.md")
