"""Improving actions: where a profile of a walked game leaves a player a profitable one-step
deviation. XDO's ``"improving"`` expansion (:mod:`psro.algorithms.xdo_improving`) grows its
restricted game by them.

At an information set ``I`` of player p, the counterfactual regret of action ``a`` against a
profile ``pi`` is ``v(I, a) - v(I)``: ``v(I, a)`` the counterfactual value (the other players'
and chance's reach times p's return) of taking ``a`` at ``I`` and playing ``pi_p`` below it,
``v(I)`` that of ``pi_p`` at ``I``. A profile in which no player has a positive regret at any
information set is an equilibrium (one-step deviations suffice in games of perfect recall);
the converse need not hold at information sets a player's own policy never reaches, where an
equilibrium may play anything.
"""

from __future__ import annotations

import numpy as np

from psro.extensive_form import cfr_passes
from psro.extensive_form.cfr_passes import PreparedPlayer
from psro.extensive_form.sequence_form import SequenceFormGame


def prepared_players(tree: SequenceFormGame) -> list[PreparedPlayer]:
    """Each player's indices over every legal action (:func:`improving_actions` reads them)."""
    return [cfr_passes.prepare_player(tree, p, tree.uniform_policy(p) > 0)
            for p in range(tree.num_players)]


def improving_actions(tree: SequenceFormGame, prepared: list[PreparedPlayer],
                      policies: list[np.ndarray], tolerance: float) -> list[np.ndarray]:
    """Per player, boolean (num_infosets, num_actions): at each information set where some
    legal action's counterfactual regret against ``policies`` (each player's (num_infosets,
    num_actions) action probabilities) exceeds ``tolerance``, the actions of largest regret
    (ties all); nothing elsewhere. ``prepared``: :func:`prepared_players` of ``tree``."""
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    out = []
    for p, prep in enumerate(prepared):
        weight = cfr_passes.leaf_weights(tree, p, plans, prep.returns)
        values, node, _ = cfr_passes.counterfactual_values(tree, p, prep, weight, policies[p])
        regret = np.where(prep.allowed, values - node[:, None], -np.inf)
        best = regret.max(axis=1, keepdims=True)
        out.append((best > tolerance) & (regret >= best))
    return out


__all__ = ["improving_actions", "prepared_players"]
