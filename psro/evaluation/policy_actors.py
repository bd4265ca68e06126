"""Policies made outside the toolkit, played in batched rollouts where no tree is walked (games too
large for exact evaluation): what :mod:`psro.evaluation.user_policies` accepts, move by move."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from psro.errors import PolicyError
from psro.evaluation.user_policies import (
    SUM_TOLERANCE,
    fill_entry,
    is_module,
    module_probs,
    openspiel_probs,
    per_player,
)


class PolicyActor:
    """Plays a user's policy in batched rollouts where no tree is walked (games too large for
    exact evaluation): information-state strings are looked up (mappings), OpenSpiel's
    ``action_probabilities`` is called (Policy objects), or the module is run on observation
    tensors (torch modules). Each distribution is checked as :func:`check_table` does."""

    def __init__(self, policy, player: int):
        self.policy, self.player = policy, player
        self.observes = is_module(policy)

    def action_probs(self, vg, idx, player, obs, mask) -> np.ndarray:
        """The policy's probabilities at the states (checked to be distributions over the legal
        actions)."""
        if self.observes:
            probs = module_probs(self.policy, obs, mask, player)
        else:
            probs = np.zeros(mask.shape)
            for row, i in enumerate(idx):
                state = vg.states[i]
                key = state.information_state_string(player)
                if isinstance(self.policy, Mapping):
                    entry = self.policy.get(key)
                    if entry is None:
                        raise PolicyError(f"the policy has no entry for information state "
                                          f"{key!r} of player {player}")
                else:
                    entry = openspiel_probs(self.policy, state, player, key)
                fill_entry(probs, row, entry, key, player)
        bad = np.flatnonzero(~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
                             | (probs * ~mask).any(axis=1)
                             | (np.abs(probs.sum(axis=1) - 1) > SUM_TOLERANCE))
        if bad.size:
            state = vg.states[idx[int(bad[0])]]
            raise PolicyError(f"the policy's probabilities at information state "
                              f"{state.information_state_string(player)!r} of player "
                              f"{player} are not a distribution over the legal actions")
        return probs


def policy_actors(policy, num_players: int) -> list[PolicyActor]:
    """One :class:`PolicyActor` per player (a list of per-player policies, or one for all);
    :class:`PolicyError` for what :func:`policy_tables` would refuse without a tree."""
    from open_spiel.python import policy as os_policy

    actors = []
    for p, one in enumerate(per_player(policy, num_players)):
        if not isinstance(one, (os_policy.Policy, Mapping)) and not is_module(one):
            raise PolicyError(f"cannot read a policy from {type(one).__name__} (player {p}); "
                              f"accepted: an OpenSpiel Policy, a mapping {{information state: "
                              f"{{action: probability}}}}, a torch module or a toolkit network, "
                              f"or a list of {num_players} of them, one per player")
        actors.append(PolicyActor(one, p))
    return actors
