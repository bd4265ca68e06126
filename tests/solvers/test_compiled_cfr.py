"""The compiled CFR-family engine (two-player games) against the numpy passes that games of
more players run, written apart: the same iterates, averages and restricted NashConv on random
restricted games; and the compact part a restricted game's players reach gives every expected
return the whole tree gives. OpenSpiel's own CFR+, linear and discounted CFR check the
compiled engine on whole games iterate for iterate (``test_tabular_cfr``)."""

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from psro.algorithms.xdo_responses import with_lowest_legal
from psro.extensive_form.cfr_variants import VARIANTS
from psro.extensive_form.compact import compact_game
from psro.extensive_form.compiled_cfr import CompiledRun
from psro.extensive_form.restricted_cfr import RestrictedCFR, restricted_nash_conv
from psro.extensive_form.sequence_form import SequenceFormGame

TREES = {name: SequenceFormGame(pyspiel.load_game(name))
         for name in ("kuhn_poker", "leduc_poker", "liars_dice(dice_sides=3)")}


def _restricted(tree: SequenceFormGame, seed: int, keep: float) -> list[np.ndarray]:
    """A random restricted game: each legal action kept with probability ``keep``, and the
    lowest legal action where none is."""
    rng = np.random.default_rng(seed)
    out = []
    for p, info in enumerate(tree.players):
        legal = tree.uniform_policy(p) > 0
        out.append(with_lowest_legal(legal & (rng.random(legal.shape) < keep), info.legal))
    return out


def _random_policy(tree: SequenceFormGame, allowed: list[np.ndarray], seed: int):
    rng = np.random.default_rng(seed)
    out = []
    for a in allowed:
        weights = rng.random(a.shape) * a
        out.append(weights / weights.sum(axis=1, keepdims=True))
    return out


@settings(max_examples=24, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       keep=st.sampled_from([0.3, 0.6, 1.0]), variant=st.sampled_from(sorted(VARIANTS)))
def test_the_compiled_engine_iterates_as_the_numpy_passes(name, seed, keep, variant):
    tree = TREES[name]
    allowed = _restricted(tree, seed, keep)
    numpy_run = RestrictedCFR(tree, warm=False, variant=variant, compiled=False)
    compiled = RestrictedCFR(tree, warm=False, variant=variant)
    first = numpy_run.solve(allowed, tolerance=0.0, max_iterations=12)
    second = compiled.solve(allowed, tolerance=0.0, max_iterations=12)
    assert second.nash_conv == pytest.approx(first.nash_conv, rel=1e-9, abs=1e-12)
    for p in range(2):
        reach = tree.realization_plan(p, first.policies[p])[tree.players[p].parent_seq] > 0
        np.testing.assert_allclose(second.policies[p][reach], first.policies[p][reach],
                                   atol=1e-10)


@settings(max_examples=16, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       keep=st.sampled_from([0.3, 0.5]))
def test_a_carried_average_is_a_realization_plan_of_the_larger_game(name, seed, keep):
    """A DCFR+ run on a restricted game that continues (``carry_average``) the average of a
    CFR+ run on a smaller one: its average meets the sequence form's constraints (each
    information set's actions sum to its parent sequence) at every information set of its
    game, those the smaller game never reached included; it is the smaller run's average
    wherever that one weighs, and the iteration count carries."""
    tree = TREES[name]
    small = _restricted(tree, seed, keep)
    large = [a | b for a, b in zip(small, _restricted(tree, seed + 1, keep), strict=True)]
    regrets = [np.zeros(info.num_sequences) for info in tree.players]
    first = CompiledRun(tree, compact_game(tree, small), regrets, VARIANTS["cfr+"])
    first.run(5)
    first.save_regrets(regrets)
    second = CompiledRun(tree, compact_game(tree, large), regrets, VARIANTS["dcfr+"])
    second.carry_average(first.average_on_tree())
    assert second.t == 5
    for p, player in enumerate(second.game.players):
        info = tree.players[p]
        plan = second.on_tree(p, second.average_plans()[p])
        before = first.on_tree(p, first.average_plans()[p])
        by_infoset = np.bincount(info.seq_infoset[1:], weights=plan[1:],
                                 minlength=info.num_infosets)
        kept = player.infosets
        np.testing.assert_allclose(by_infoset[kept], plan[info.parent_seq[kept]], atol=1e-12)
        weighed = before > 0
        np.testing.assert_allclose(plan[weighed], before[weighed], atol=1e-12)
    second.run(3)
    assert second.t == 8


@settings(max_examples=12, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       variant=st.sampled_from(sorted(VARIANTS)))
def test_one_solver_on_restricted_games_in_turn_iterates_as_the_numpy_passes(name, seed,
                                                                              variant):
    """One compiled solver asked for a restricted game, another, the whole game and the first
    again (each cut out of the whole game's arrays into the same buffers) gives, on each, the
    restricted NashConv and reached policies of the numpy passes asked the same in turn."""
    tree = TREES[name]
    first = _restricted(tree, seed, 0.4)
    games = [first, _restricted(tree, seed + 1, 0.7), _restricted(tree, seed, 1.0), first]
    numpy_run = RestrictedCFR(tree, warm=False, variant=variant, compiled=False)
    compiled = RestrictedCFR(tree, warm=False, variant=variant)
    for allowed in games:
        expected = numpy_run.solve(allowed, tolerance=0.0, max_iterations=8)
        found = compiled.solve(allowed, tolerance=0.0, max_iterations=8)
        assert found.nash_conv == pytest.approx(expected.nash_conv, rel=1e-9, abs=1e-12)
        for p in range(2):
            plan = tree.realization_plan(p, expected.policies[p])
            reach = plan[tree.players[p].parent_seq] > 0
            np.testing.assert_allclose(found.policies[p][reach], expected.policies[p][reach],
                                       atol=1e-10)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(name=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       keep=st.sampled_from([0.3, 0.6, 1.0]))
def test_the_compact_part_gives_the_trees_returns_and_restricted_nash_conv(name, seed, keep):
    """Policies that play only allowed actions: their expected returns summed over the compact
    part's leaves are the whole tree's, and the kernel's restricted NashConv is the numpy
    one's."""
    tree = TREES[name]
    allowed = _restricted(tree, seed, keep)
    policies = _random_policy(tree, allowed, seed + 1)
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    game = compact_game(tree, allowed)
    compact = [plan[player.sequences] for plan, player in zip(plans, game.players, strict=True)]
    for p in range(2):
        value = game.leaf_weights[p] @ (compact[0][game.leaf_seqs[0]] *
                                        compact[1][game.leaf_seqs[1]])
        assert value == pytest.approx(tree.expected_returns(plans)[p], abs=1e-12)
    run = CompiledRun(tree, game, [np.zeros(i.num_sequences) for i in tree.players],
                      VARIANTS["cfr+"])
    run.sums = compact
    assert run.nash_conv() == pytest.approx(restricted_nash_conv(tree, policies, allowed),
                                            abs=1e-12)


def test_a_game_of_three_players_runs_the_numpy_passes():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker(players=3)"))
    assert not RestrictedCFR(tree).compiled
    with pytest.raises(ValueError, match="two players"):
        compact_game(tree, [tree.uniform_policy(p) > 0 for p in range(3)])
