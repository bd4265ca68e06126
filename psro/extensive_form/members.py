"""Population members and the actors that play them in batched rollouts.

A *member* is one player's policy in a population. Every member has ``player``, ``name``,
``metadata`` (free for the run: iteration, oracle, ...), a ``kind`` that names how it is saved
(``"tabular"``, ``"neural"`` or ``"uniform"``) and ``actor(tree)``, the object that plays it in
rollouts. Tabular members (:class:`psro.extensive_form.policies.TabularPolicy`) also have a
realization plan, which exact evaluation needs.

An *actor* has ``action_probs(vg, idx, player, obs, mask) -> (len(idx), num_actions)`` for the
states ``idx`` of a :class:`games.simulation.VectorGame`; with ``observes = False`` it is given
``obs=None`` (its observation tensors are not built).
"""

from __future__ import annotations

import numpy as np


class Keys:
    """The keys of member ``metadata`` that parts of the toolkit read (defined once, here).
    Every member also records ``iteration`` and ``oracle``."""

    TARGET = "target"
    """The index (``Target.tag``) of the target a best response was trained for, when a
    player has several in one iteration (rectified, jpsro's CE, pipeline's learners)."""
    LEARNER = "learner"
    """Pipeline PSRO: the learner a snapshot belongs to."""
    FROZEN = "frozen"
    """Pipeline PSRO: the snapshot is its learner's last (the learner is frozen)."""
    RESTRICTED = "restricted"
    """Anytime by regret matching: the opponent's restricted mixture found while this member
    trained (a list)."""
    RESTRICTED_VALUE = "restricted_value"
    """Anytime by regret matching: the mean of the rounds' estimated values of that mixture."""
    ROUND_EPISODES = "round_episodes"
    """Anytime by regret matching: the episodes its rounds simulated to estimate the members'
    returns (their cost, beside the response's own training)."""
    GAIN = "gain"
    """JPSRO: what the member gains by deviating from the joint it was admitted against."""


class UniformMember:
    """Uniform over the legal actions: the initial member where no tree is walked."""

    kind = "uniform"
    observes = False  # needs only the legal-action masks

    def __init__(self, player: int):
        self.player = player
        self.name = f"uniform_p{player}"
        self.metadata = {"iteration": 0, "oracle": "uniform"}

    def actor(self, tree=None) -> UniformMember:
        """Plays itself in rollouts."""
        return self

    @staticmethod
    def action_probs(vg, idx, player, obs, mask) -> np.ndarray:
        """Uniform over each state's legal actions."""
        return mask / mask.sum(axis=1, keepdims=True)


class TabularActor:
    """Plays an action-probability table in batched rollouts (looks each state's information
    set up in the walked tree)."""

    observes = False  # looks information sets up by their strings

    def __init__(self, tree, probs: np.ndarray, name: str = ""):
        self.tree = tree
        self.probs = probs
        self.name = name

    def action_probs(self, vg, idx, player, obs, mask) -> np.ndarray:
        """The table's rows at the states' information sets."""
        rows = [self.tree.infoset_index(player, vg.states[i].information_state_string(player))
                for i in idx]
        return self.probs[rows]


def network_of(member):
    """The network behind a member: the member itself when it is neural, the network a table
    was read from, or None (uniform or purely tabular members)."""
    return member if getattr(member, "kind", None) == "neural" else getattr(member, "network",
                                                                           None)
