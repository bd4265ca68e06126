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

What a restricted equilibrium plays there is arbitrary (the LP's solution leaves it free), yet
it is the continuation of every one-step deviation that leads there, so it decides which
actions look improving. :func:`best_off_path` fixes it: there, each player plays a best
response within its allowed actions. Then no allowed action has a positive regret against a
restricted equilibrium, and a profile with an exploitability above the tolerance has an
improving action outside the restricted game. On liar's dice, with the restricted LPs of
:mod:`psro.extensive_form.sequence_lp`, the improving double oracle without it found no new
improving action three times and fell back to best responses, which add every action they
take: 52 LPs and 78% of the game's actions at its end, against 22 LPs and 54% with it.
"""

from __future__ import annotations

import numpy as np

from psro.extensive_form import sequence_passes as passes
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_passes import SequencePlayer

REGRET_TOLERANCE = 1e-9
"""Least counterfactual regret, times the game's largest absolute return, of an improving
action, as both double oracles on improving actions take it (``xdo --xdo-expansion
improving`` and ``psro solve-tree --solver xdo``): the restricted LP's own accuracy is about
1e-9 or better."""


def prepared_players(tree: SequenceFormGame) -> list[SequencePlayer]:
    """Each player's indices by sequence over every legal action
    (:func:`~psro.extensive_form.sequence_passes.sequence_player` on the whole tree), as
    :func:`best_off_path` and :func:`improving_actions` read them."""
    return [passes.sequence_player(tree, p, tree.uniform_policy(p) > 0)
            for p in range(tree.num_players)]


def best_off_path(tree: SequenceFormGame, policies: list[np.ndarray],
                  allowed: list[np.ndarray], prepared: list[SequencePlayer] | None = None,
                  plans: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """``policies`` (each player's (num_infosets, num_actions) action probabilities, playing
    only ``allowed`` actions) with, at every information set a player's own policy does not
    reach, that player's best response within its ``allowed`` actions to the others'
    ``policies`` (the lowest allowed action of largest value). The realization plans, and so
    every expected return, are unchanged. ``prepared`` (:func:`prepared_players` of ``tree``)
    and ``plans`` (the policies' realization plans), where the caller has them, save
    computing them again."""
    plans = _plans(tree, policies, plans)
    prepared = prepared_players(tree) if prepared is None else prepared
    return _completed(tree, policies, allowed, prepared, plans,
                      _leaf_values(prepared, plans))


def improving_actions(tree: SequenceFormGame, prepared: list[SequencePlayer],
                      policies: list[np.ndarray], tolerance: float,
                      plans: list[np.ndarray] | None = None,
                      allowed: list[np.ndarray] | None = None) -> list[np.ndarray]:
    """Per player, boolean (num_infosets, num_actions): at each information set where some
    legal action's counterfactual regret against ``policies`` (each player's (num_infosets,
    num_actions) action probabilities) exceeds ``tolerance``, the actions of largest regret
    (ties all); nothing elsewhere. ``prepared``: :func:`prepared_players` of ``tree``;
    ``plans``: the policies' realization plans, where the caller has them. With ``allowed``
    (the restricted game the policies play), against the policies completed by
    :func:`best_off_path` (one pass over the leaves serves both)."""
    plans = _plans(tree, policies, plans)
    leaf_values = _leaf_values(prepared, plans)
    if allowed is not None:
        policies = _completed(tree, policies, allowed, prepared, plans, leaf_values)
    out = []
    for p, prep in enumerate(prepared):
        info = tree.players[p]
        value, node, _ = passes.values(prep, leaf_values[p],
                                       passes.by_sequence(tree, p, policies[p]))
        seqs = prep.visited
        infosets = prep.infoset[seqs]
        regret = value[seqs] - node[infosets]
        best = np.full(info.num_infosets, -np.inf)
        np.maximum.at(best, infosets, regret)
        chosen = seqs[(best[infosets] > tolerance) & (regret >= best[infosets])]
        found = np.zeros((info.num_infosets, tree.num_actions), dtype=bool)
        found[info.seq_infoset[chosen], info.seq_action[chosen]] = True
        out.append(found)
    return out


def _completed(tree: SequenceFormGame, policies: list[np.ndarray], allowed: list[np.ndarray],
               prepared: list[SequencePlayer], plans: list[np.ndarray],
               leaf_values: list[np.ndarray]) -> list[np.ndarray]:
    """:func:`best_off_path` from each player's leaf values by sequence."""
    out = []
    for p, probs in enumerate(policies):
        info = tree.players[p]
        within = passes.by_sequence(tree, p, allowed[p]) > 0
        best = passes.best_response(prepared[p], leaf_values[p], within)
        reached = plans[p][info.parent_seq] > 0
        out.append(np.where(reached[:, None], probs, passes.policy_array(tree, p, best)))
    return out


def _plans(tree: SequenceFormGame, policies: list[np.ndarray],
           plans: list[np.ndarray] | None) -> list[np.ndarray]:
    if plans is None:
        return [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    return plans


def _leaf_values(prepared: list[SequencePlayer],
                 plans: list[np.ndarray]) -> list[np.ndarray]:
    """Each player's :func:`~psro.extensive_form.sequence_passes.leaf_values` against the
    others' ``plans``."""
    return [passes.leaf_values(prep, p, plans) for p, prep in enumerate(prepared)]


__all__ = ["REGRET_TOLERANCE", "best_off_path", "improving_actions", "prepared_players"]
