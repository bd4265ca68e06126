"""Sequence-form evaluation and best responses against OpenSpiel's own code."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as os_policy
from open_spiel.python.algorithms import exploitability

from psro.errors import GameTooLargeError
from psro.extensive_form.policies import (
    TabularPolicy,
    from_openspiel,
    to_openspiel,
    to_openspiel_tabular,
)
from psro.extensive_form.sequence_form import SequenceFormGame


def _random_policies(tree, seed):
    rng = np.random.default_rng(seed)
    out = []
    for p in range(tree.num_players):
        probs = tree.uniform_policy(p) * rng.uniform(0.05, 1, (tree.players[p].num_infosets,
                                                                tree.num_actions))
        out.append(TabularPolicy(p, probs / probs.sum(axis=1, keepdims=True)))
    return out


def _as_openspiel_tabular(game, tree, policies):
    return to_openspiel_tabular(tree, policies)


@pytest.mark.parametrize("spec", ["kuhn_poker", "leduc_poker",
                                  "goofspiel(num_cards=4,imp_info=True)",
                                  "kuhn_poker(players=3)"])
def test_expected_returns_agree_with_openspiel(spec):
    game = pyspiel.load_game(spec)
    tree = SequenceFormGame(game)
    for seed in range(3):
        policies = _random_policies(tree, seed)
        ours = tree.expected_returns([m.realization_plan(tree) for m in policies])
        tabular = _as_openspiel_tabular(game, tree, policies)
        theirs = pyspiel.expected_returns(game.new_initial_state(),
                                          pyspiel.TabularPolicy(tabular.to_dict()), -1, True)
        np.testing.assert_allclose(ours, theirs, atol=1e-12)


@pytest.mark.parametrize("spec", ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"])
def test_nash_conv_agrees_with_openspiel(spec):
    game = pyspiel.load_game(spec)
    tree = SequenceFormGame(game)
    policies = _random_policies(tree, 11)
    plans = [m.realization_plan(tree) for m in policies]
    values = tree.expected_returns(plans)
    ours = sum(tree.best_response(p, plans)[1] - values[p] for p in range(tree.num_players))
    theirs = exploitability.nash_conv(game, _as_openspiel_tabular(game, tree, policies))
    assert ours == pytest.approx(theirs, abs=1e-12)


@pytest.mark.parametrize("spec, members", [("kuhn_poker", (3, 2)),
                                           ("leduc_poker", (3, 2)),
                                           ("leduc_poker", (2, 5)),
                                           ("goofspiel(num_cards=4,imp_info=True)", (4, 1)),
                                           ("kuhn_poker(players=3)", (2, 3, 4)),
                                           ("kuhn_poker(players=4)", (2, 1, 3, 2))])
def test_payoff_block_matches_single_profiles(spec, members):
    """Every entry of a block (a different member count per player, so that a mixed-up axis
    shows) against OpenSpiel's expected returns of that profile's policies. Leduc and
    goofspiel 4 are past ``SPARSE_PAYOFF_LEAVES`` (the sparse product, with either stack the
    smaller), Kuhn below it."""
    game = pyspiel.load_game(spec)
    tree = SequenceFormGame(game)
    pols = [_random_policies(tree, s) for s in range(max(members))]
    stacks = [np.stack([pols[k][p].realization_plan(tree) for k in range(m)])
              for p, m in enumerate(members)]
    block = tree.payoff_block(stacks)
    assert block.shape == (len(members), *members)
    for index in np.ndindex(*members):
        profile = [pols[k][p] for p, k in enumerate(index)]
        tabular = _as_openspiel_tabular(game, tree, profile)
        theirs = pyspiel.expected_returns(game.new_initial_state(),
                                          pyspiel.TabularPolicy(tabular.to_dict()), -1, True)
        np.testing.assert_allclose(block[(slice(None), *index)], theirs, rtol=0, atol=1e-12)


@pytest.mark.parametrize("convert", [to_openspiel, to_openspiel_tabular])
def test_openspiel_round_trip(convert):
    game = pyspiel.load_game("leduc_poker")
    tree = SequenceFormGame(game)
    policies = _random_policies(tree, 2)
    converted = convert(tree, policies)
    back = [from_openspiel(tree, converted, p) for p in range(2)]
    for a, b in zip(policies, back, strict=True):
        np.testing.assert_allclose(a.probs, b.probs, atol=1e-12)
    if convert is to_openspiel_tabular:
        assert isinstance(converted, os_policy.TabularPolicy)


def test_tabular_conversion_refuses_shared_keys():
    tree = SequenceFormGame(pyspiel.load_game("goofspiel(num_cards=3)"))
    with pytest.raises(ValueError, match="cannot tell them apart"):
        to_openspiel_tabular(tree, _random_policies(tree, 0))


def test_too_large_game_refused_quickly():
    with pytest.raises(GameTooLargeError, match="more than 500 nodes"):
        SequenceFormGame(pyspiel.load_game("leduc_poker"), max_nodes=500)


def test_a_game_found_too_large_is_refused_again_without_a_walk(monkeypatch):
    from psro.extensive_form import tree_walk

    game = pyspiel.load_game("kuhn_poker")  # 58 nodes
    with pytest.raises(GameTooLargeError, match="more than 20 nodes"):
        SequenceFormGame(game, max_nodes=20)

    def no_walk(*args, **kwargs):
        raise AssertionError("walked again")

    with monkeypatch.context() as patch:
        patch.setattr(tree_walk.TreeWalk, "_walk", no_walk)
        with pytest.raises(GameTooLargeError, match="more than 10 nodes"):
            SequenceFormGame(game, max_nodes=10)
    assert SequenceFormGame(game, max_nodes=100).num_players == 2  # a higher limit walks


def test_best_responses_asked_again_are_openspiels_and_cannot_be_changed_by_callers():
    """The answers a tree keeps for plans asked again are OpenSpiel's best responses to them:
    after a caller scribbles over an answer, and after other plans were asked in between
    (the same plans halved: half the value), each plan's best response still has the value
    OpenSpiel's ``best_response`` gives."""
    from open_spiel.python.algorithms import best_response as os_best_response

    game = pyspiel.load_game("leduc_poker")
    tree = SequenceFormGame(game)
    policies = _random_policies(tree, 5)
    plans = [m.realization_plan(tree) for m in policies]
    nudged = [plan * 0.5 for plan in plans]
    openspiel = os_best_response.BestResponsePolicy(
        game, 0, _as_openspiel_tabular(game, tree, policies)).value(game.new_initial_state())
    first, value = tree.best_response(0, plans)
    first[:] = 0.0
    for asked in (nudged, plans, nudged, plans):
        probs, again = tree.best_response(0, asked)
        assert probs.sum() == tree.players[0].num_infosets  # one-hot, untouched by the caller
        if asked is plans:
            assert again == value == pytest.approx(openspiel, abs=1e-12)
        else:
            assert again == pytest.approx(openspiel / 2, abs=1e-12)
