"""The CFR family on the walked sequence form against independent implementations: OpenSpiel's
Python ``CFRPlusSolver`` and ``discounted_cfr`` (linear and discounted CFR, and discounted CFR+
by its regret matching+ reset) iterate for iterate to 1e-12, predictive CFR+ against a
recursive one written here over pyspiel states, and every variant's exploitability
(OpenSpiel's own) falls to the game's equilibrium."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import cfr, discounted_cfr
from open_spiel.python.algorithms.exploitability import exploitability

from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.tabular_cfr import VARIANTS, TabularCFR


def _openspiel_policy(tree: SequenceFormGame, policies: list[np.ndarray]):
    """The tree's policies as an OpenSpiel TabularPolicy, read by information-state string."""
    table = os_policy.TabularPolicy(tree.game)
    for p, probs in enumerate(policies):
        for state in tree.representative_states(p):
            key = state.information_state_string(p)
            i = tree.infoset_index(p, key)
            table.policy_for_key(key)[:] = probs[i, :len(table.policy_for_key(key))]
    return table


def _table_of(tree: SequenceFormGame, openspiel_policy) -> list[np.ndarray]:
    out = []
    for p in range(tree.num_players):
        probs = np.zeros((tree.players[p].num_infosets, tree.num_actions))
        for state in tree.representative_states(p):
            key = state.information_state_string(p)
            for action, prob in openspiel_policy.action_probabilities(state, p).items():
                probs[tree.infoset_index(p, key), action] = prob
        out.append(probs)
    return out


class _DCFRPlusSolver(discounted_cfr._DCFRSolver):
    """Discounted CFR+ (Xu et al. 2024: alpha 1.5, gamma 4) from OpenSpiel's own parts: its
    discounted CFR, whose regrets of each player are floored at 0 by OpenSpiel's regret
    matching+ reset before its discount is applied."""

    def __init__(self, game: pyspiel.Game):
        super().__init__(game, alternating_updates=True, linear_averaging=True,
                         regret_matching_plus=True, alpha=1.5, beta=0.0, gamma=4.0)

    def _compute_counterfactual_regret_for_player(self, state, *args, **kwargs):
        value = super()._compute_counterfactual_regret_for_player(state, *args, **kwargs)
        if state is self._root_node:  # the whole pass (it recurses) is done: floor, then
            cfr._apply_regret_matching_plus_reset(self._info_state_nodes)  # the discount
        return value


@pytest.mark.parametrize("game, iterations", [
    ("kuhn_poker", 60), ("leduc_poker", 6),
    ("liars_dice(dice_sides=4)", 10)])  # information sets of up to 9 actions
@pytest.mark.parametrize("variant, reference", [
    ("cfr+", cfr.CFRPlusSolver), ("lcfr", discounted_cfr.LCFRSolver),
    ("dcfr", discounted_cfr.DCFRSolver), ("dcfr+", _DCFRPlusSolver)])
def test_average_policies_equal_openspiels_iterate_for_iterate(game, iterations, variant,
                                                               reference):
    pyspiel_game = pyspiel.load_game(game)
    tree = SequenceFormGame(pyspiel_game)
    ours, theirs = TabularCFR(tree, variant), reference(pyspiel_game)
    for _ in range(iterations):
        ours.iterate()
        theirs.evaluate_and_update_policy()
    expected = _table_of(tree, theirs.average_policy())
    for mine, other in zip(ours.average(), expected, strict=True):
        np.testing.assert_allclose(mine, other, atol=1e-12)
    expected_now = _table_of(tree, theirs.current_policy())
    for mine, other in zip(ours.current(), expected_now, strict=True):
        np.testing.assert_allclose(mine, other, atol=1e-12)


def _recursive_pcfr_plus(game: pyspiel.Game, iterations: int) -> dict[str, np.ndarray]:
    """Predictive CFR+ written over pyspiel states, independently of the sequence form: per
    information-state string, regrets, the current policy and the quadratically weighted
    policy sums; alternating updates; each new policy by predictive regret matching+ with
    the counterfactual values of this iteration as the prediction, computed bottom-up (an
    information set's predicted values use the new policies of the information sets below
    it)."""
    num_actions = game.num_distinct_actions()
    regrets, current, sums = {}, {}, {}
    nodes: dict[str, list] = {}  # key -> [(state, depth)] of the acting player

    def collect(state, depth):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                collect(state.child(action), depth)
            return
        player = state.current_player()
        key = state.information_state_string(player)
        legal = np.zeros(num_actions, dtype=bool)
        legal[state.legal_actions()] = True
        if key not in current:
            regrets[key], sums[key] = np.zeros(num_actions), np.zeros(num_actions)
            current[key] = legal / legal.sum()
        nodes.setdefault(key, []).append((player, depth, legal))
        for action in state.legal_actions():
            collect(state.child(action), depth + 1)

    collect(game.new_initial_state(), 0)

    def values(state, player, policy, reach_others, reach_own, cf, t):
        """Expected value for ``player``; adds counterfactual action values into ``cf``."""
        if state.is_terminal():
            return state.returns()[player]
        if state.is_chance_node():
            return sum(prob * values(state.child(a), player, policy, reach_others * prob,
                                     reach_own, cf, t) for a, prob in state.chance_outcomes())
        actor = state.current_player()
        key = state.information_state_string(actor)
        probs = policy[key]
        if actor != player:
            return sum(probs[a] * values(state.child(a), player, policy,
                                         reach_others * probs[a], reach_own, cf, t)
                       for a in state.legal_actions())
        sums[key] += t ** 2 * reach_own * probs
        action_values = np.zeros(num_actions)
        for a in state.legal_actions():
            action_values[a] = values(state.child(a), player, policy, reach_others,
                                      reach_own * probs[a], cf, t)
        cf.setdefault(key, np.zeros(num_actions))
        cf[key] += reach_others * action_values
        return float(probs @ action_values)

    def predicted(state, player, policy, new, reach_others, target, sink):
        """Predicted value of ``state`` for ``player``: own information sets below ``target``
        at the new policies chosen already (``new``); at ``target``, its predicted action
        values (weighted by the others' reach) are added into ``sink``; other own
        information sets (above it) are descended through every action."""
        if state.is_terminal():
            return state.returns()[player]
        if state.is_chance_node():
            return sum(prob * predicted(state.child(a), player, policy, new,
                                        reach_others * prob, target, sink)
                       for a, prob in state.chance_outcomes())
        actor = state.current_player()
        key = state.information_state_string(actor)
        children = [(a, predicted(state.child(a), player, policy, new,
                                  reach_others * (policy[key][a] if actor != player else 1.0),
                                  target, sink)) for a in state.legal_actions()]
        if actor != player:
            return sum(policy[key][a] * value for a, value in children)
        if key == target:
            for a, value in children:
                sink[a] += reach_others * value
        return sum(new[key][a] * value for a, value in children) if key in new else 0.0

    for t in range(1, iterations + 1):
        for player in range(game.num_players()):
            cf: dict = {}
            values(game.new_initial_state(), player, current, 1.0, 1.0, cf, t)
            own = [k for k in cf if nodes[k][0][0] == player]
            for key in own:
                legal = nodes[key][0][2]
                regrets[key] = np.maximum(
                    regrets[key] + np.where(legal, cf[key] - cf[key] @ current[key], 0.0), 0)
            new: dict = {}
            for key in sorted(own, key=lambda k: -nodes[k][0][1]):  # deepest first
                m = np.zeros(num_actions)
                predicted(game.new_initial_state(), player, current, new, 1.0, key, m)
                legal = nodes[key][0][2]
                gain = np.where(legal, np.maximum(regrets[key] + m - m @ current[key], 0), 0)
                new[key] = gain / gain.sum() if gain.sum() > 0 else legal / legal.sum()
            current.update(new)
    return {k: (s / s.sum() if s.sum() > 0 else current[k]) for k, s in sums.items()}


def test_predictive_cfr_plus_equals_a_recursive_implementation_on_kuhn():
    game = pyspiel.load_game("kuhn_poker")
    tree = SequenceFormGame(game)
    ours = TabularCFR(tree, "pcfr+")
    ours.iterate(8)
    expected = _recursive_pcfr_plus(game, 8)
    for p, probs in enumerate(ours.average()):
        for state in tree.representative_states(p):
            key = state.information_state_string(p)
            np.testing.assert_allclose(probs[tree.infoset_index(p, key)], expected[key],
                                       atol=1e-12, err_msg=key)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_converges_by_openspiels_exploitability(variant):
    game = pyspiel.load_game("kuhn_poker")
    tree = SequenceFormGame(game)
    solver = TabularCFR(tree, variant)
    solver.iterate(400)
    assert exploitability(game, _openspiel_policy(tree, solver.average())) < 1e-3


def test_an_unknown_variant_names_the_accepted_ones():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="unknown CFR variant 'pcfr'; accepted: pcfr\\+, dcfr"):
        TabularCFR(tree, "pcfr")
