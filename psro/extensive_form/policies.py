"""Tabular policies, meta-policies (a population mixed by ``w``), and OpenSpiel conversion."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from games.simulation import observation_tensor
from psro.extensive_form.members import TabularActor
from psro.extensive_form.sequence_form import SequenceFormGame


@dataclass
class TabularPolicy:
    """One player's behavioural policy on the information sets of a :class:`SequenceFormGame`.

    ``probs`` has shape (num_infosets, num_actions); row i is the action distribution at the
    player's information set i (zero on illegal actions). ``name`` and ``metadata`` are free
    for the caller (PSRO stores the iteration and the oracle).
    """

    player: int
    probs: np.ndarray
    name: str = ""
    metadata: dict = field(default_factory=dict)
    network: object = None
    """The neural policy this table was read from (PPO oracle), kept for warm starts."""
    _plan: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    kind = "tabular"

    def realization_plan(self, tree: SequenceFormGame) -> np.ndarray:
        """The table's realization plan on ``tree`` (computed once; ``probs`` is not to be
        changed afterwards)."""
        if self._plan is None:
            self._plan = tree.realization_plan(self.player, self.probs)
        return self._plan

    def actor(self, tree: SequenceFormGame) -> TabularActor:
        """Plays the table in rollouts (only the table travels, not the network behind it)."""
        return TabularActor(tree, self.probs, self.name)


def from_openspiel(tree: SequenceFormGame, policy: os_policy.Policy, player: int,
                   name: str = "") -> TabularPolicy:
    """Read ``player``'s part of any OpenSpiel policy into a :class:`TabularPolicy`.

    Queries ``policy.action_probabilities`` once per information set, so it also tabularises
    neural or callable policies.
    """
    tree_p = tree.players[player]
    probs = np.zeros((tree_p.num_infosets, tree.num_actions))
    states = tree.representative_states(player)
    for i, state in enumerate(states):
        for action, prob in policy.action_probabilities(state, player).items():
            probs[i, action] = prob
    return TabularPolicy(player, probs, name)


def tabularise(tree: SequenceFormGame, network, player: int, name: str = "",
               metadata: dict | None = None) -> TabularPolicy:
    """Query a neural policy once at every information set of ``player`` (one batched forward
    pass) so payoffs and exploitability stay exact. Uses information-state tensors, or
    observation tensors where the game has none (as the network was trained on)."""
    states = tree.representative_states(player)
    tensor = observation_tensor(tree.game)
    obs = np.array([getattr(s, tensor)(player) for s in states], dtype=np.float32)
    mask = np.zeros((len(states), tree.num_actions), dtype=bool)
    for i, legal in enumerate(tree.players[player].legal):
        mask[i, legal] = True
    probs = network.probs(obs, mask) if len(states) else np.zeros((0, tree.num_actions))
    return TabularPolicy(player, probs, name=name, metadata=dict(metadata or {}),
                         network=network)


def to_openspiel_tabular(tree: SequenceFormGame,
                         policies: list[TabularPolicy]) -> os_policy.TabularPolicy:
    """The policies as one OpenSpiel ``TabularPolicy`` (rows set by information-state string).

    OpenSpiel's ``TabularPolicy`` keys rows by the string alone, so in games where two players
    can have the same information-state string (e.g. goofspiel without ``imp_info``) it cannot
    hold distinct policies for them; this raises ``ValueError`` there. :func:`to_openspiel`
    has no such limit.
    """
    tabular = os_policy.TabularPolicy(tree.game)
    owner: dict[str, int] = {}
    for member in policies:
        for i, key in enumerate(tree.players[member.player].keys):
            if owner.setdefault(key, member.player) != member.player:
                raise ValueError(f"information-state string {key!r} belongs to players "
                                 f"{owner[key]} and {member.player}; OpenSpiel's TabularPolicy "
                                 f"cannot tell them apart")
            row = tabular.state_lookup[key]
            tabular.action_probability_array[row] = member.probs[i]
    return tabular


def to_openspiel(tree: SequenceFormGame, policies: list[TabularPolicy]) -> os_policy.Policy:
    """One OpenSpiel ``Policy`` playing ``policies[p]`` for each player p."""
    return _PlanPolicy(tree, [[p] for p in policies], [np.ones(1) for _ in policies])


def simultaneous_state(game: pyspiel.Game, history: list[int]) -> pyspiel.State:
    """The state of the simultaneous-move ``game`` that a state of its turn-based version
    (``pyspiel.convert_to_turn_based``) with this ``history`` stands for: chance outcomes are
    replayed one by one and each round's moves together; in the middle of a round the state is
    the simultaneous node itself (the players still to move have not seen the others' moves)."""
    state, i, n = game.new_initial_state(), 0, game.num_players()
    while i < len(history) and not state.is_terminal():
        if not state.is_simultaneous_node():
            state.apply_action(history[i])
            i += 1
        elif len(history) - i < n:
            break
        else:
            state.apply_actions(history[i:i + n])
            i += n
    return state


class _PlanPolicy(os_policy.Policy):
    """Behaviour strategies induced by mixed realization plans (see :class:`MetaPolicy`). On a
    simultaneous-move game they also answer for the states of its turn-based version, which
    OpenSpiel's ``exploitability`` functions need."""

    def __init__(self, tree: SequenceFormGame, populations, weights):
        super().__init__(tree.game, list(range(tree.num_players)))
        self.tree = tree
        self.populations = populations
        self.weights = [np.asarray(w, float) for w in weights]
        self.plans = [
            sum(w * member.realization_plan(tree) for w, member in zip(ws, pop, strict=True))
            for ws, pop in zip(self.weights, populations, strict=True)
        ]
        self._dynamics = tree.game.get_type().dynamics
        self._simultaneous = self._dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS

    def action_probabilities(self, state, player_id=None):
        player = state.current_player() if player_id is None else player_id
        if self._simultaneous and not state.is_simultaneous_node() \
                and state.get_game().get_type().dynamics != self._dynamics:
            state = simultaneous_state(self.tree.game, state.history())  # turn-based version
        tree_p = self.tree.players[player]
        index = self.tree.infoset_index(player, state.information_state_string(player))
        if index is None:
            raise KeyError(f"information set of player {player} not in the walked tree")
        legal = tree_p.legal[index]
        plan = self.plans[player]
        reach = plan[tree_p.parent_seq[index]]
        if reach > 0:
            probs = plan[[tree_p.seq_of[index][int(a)] for a in legal]] / reach
        else:  # unreachable under the mixture: mix the members' own choices by w
            probs = sum(w * m.probs[index, legal]
                        for w, m in zip(self.weights[player], self.populations[player],
                                        strict=True))
        return {int(a): float(p) for a, p in zip(legal, probs, strict=True)}


class MetaPolicy(_PlanPolicy):
    """A population mixed by meta-strategy weights, as one OpenSpiel ``Policy``.

    ``populations[p]`` is player p's list of :class:`TabularPolicy`; ``weights[p]`` a mixture
    over it. At an information set the action probabilities are the members' reach-weighted
    mixture: ``sum_k w_k r_k(s a) / sum_k w_k r_k(s)`` for the set's parent sequence s, which
    is behaviourally equivalent to sampling one member per episode (OpenSpiel's
    ``PolicyAggregator`` computes the same).
    """
