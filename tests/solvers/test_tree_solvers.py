"""Whole-game solvers (``psro solve-tree``): the sequence-form LP's value is the game's (Kuhn:
-1/18) and its policies are unexploitable by OpenSpiel's measure; every solver's crossings are
the first measurements at or below each threshold, as OpenSpiel measures them; the command
prints a row per solver and refuses bad input in one line."""

import json

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms.exploitability import exploitability
from test_tabular_cfr import _openspiel_policy

from psro.cli import main
from psro.extensive_form.reached import live
from psro.extensive_form.restricted_cfr import restricted_nash_conv
from psro.extensive_form.restricted_solves import SETTLE_GROWTH
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_lp import (
    LP_METHODS,
    LinearProgramError,
    LinearProgramTimeout,
    SequenceFormLP,
)
from psro.extensive_form.tree_double_oracle import CFR_SHARE
from psro.extensive_form.tree_solvers import DOUBLE_ORACLES, TREE_SOLVERS, solve_tree


@pytest.mark.parametrize("method", LP_METHODS)
@pytest.mark.parametrize("game, value, tolerance", [("kuhn_poker", -1 / 18, 1e-9),
                                                    ("leduc_poker", -0.0856064, 1e-6)])
def test_the_lp_gives_the_game_value_and_an_unexploitable_profile(game, value, tolerance,
                                                                   method):
    """By either method: the game's value (Leduc's as published, -0.0856064 to 1e-6), and a
    profile OpenSpiel finds unexploitable."""
    pyspiel_game = pyspiel.load_game(game)
    tree = SequenceFormGame(pyspiel_game)
    policies, v0 = SequenceFormLP(tree).solve(method=method)
    assert v0 == pytest.approx(value, abs=tolerance)
    assert exploitability(pyspiel_game, _openspiel_policy(tree, policies)) < 1e-8
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(v0, abs=1e-8)


def test_the_live_part_of_kuhn_when_player_0_only_passes_first():
    """Player 0 allowed only to pass at its first information sets ('0', '1', '2'): player 1's
    information sets after a bet ('0b', '1b', '2b') are out of the restricted game, those after
    a pass in it, and so are player 1's sequences there; player 0's sequences of betting first
    are out."""
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    allowed = [tree.uniform_policy(p) > 0 for p in range(2)]
    for i, key in enumerate(tree.players[0].keys):
        if "p" not in key:
            allowed[0][i, 1] = False
    reached = live(tree, allowed)
    assert {k for k, ok in zip(tree.players[1].keys, reached.infosets[1],
                                              strict=True) if ok} == \
        {"0p", "1p", "2p"}
    assert all(reached.infosets[0])
    info = tree.players[0]
    first_bets = [info.seq_of[i][1] for i, key in enumerate(info.keys) if "p" not in key]
    assert not reached.sequences[0][first_bets].any()
    assert reached.sequences[0].sum() == info.num_sequences - 3
    theirs = tree.players[1]
    assert list(reached.sequences[1][1:]) == [
        theirs.keys[i].endswith("p") for i in theirs.seq_infoset[1:]]


def _restricted_at_random(tree: SequenceFormGame, rng: np.random.Generator,
                          keep: float) -> list[np.ndarray]:
    """Each player's legal actions, each kept with probability ``keep`` (one kept at random at
    an information set that would keep none)."""
    allowed = []
    for p in range(2):
        legal = tree.uniform_policy(p) > 0
        mask = legal & (rng.random(legal.shape) < keep)
        for i in np.flatnonzero(~mask.any(axis=1)):
            mask[i, tree.players[p].legal[i][rng.integers(len(tree.players[p].legal[i]))]] = True
        allowed.append(mask)
    return allowed


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), keep=st.floats(0.3, 0.9))
def test_a_restricted_games_lp_is_an_equilibrium_of_that_game(seed, keep):
    """On Leduc restricted at random (each legal action kept with probability ``keep``, one at
    least per information set): the LP's policies take only allowed actions, no best response
    limited to the allowed actions gains against them (restricted NashConv under 1e-8, by
    the CFR passes, not the LP), and player 0's value is their expected return."""
    tree = LEDUC
    allowed = _restricted_at_random(tree, np.random.default_rng(seed), keep)
    policies, v0 = SequenceFormLP(tree).solve(allowed)
    assert all(not (probs[~ok] > 0).any() for probs, ok in zip(policies, allowed,
                                                                              strict=True))
    assert restricted_nash_conv(tree, policies, allowed) < 1e-8
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(v0, abs=1e-8)


LEDUC = SequenceFormGame(pyspiel.load_game("leduc_poker"))


GOOFSPIEL_4 = SequenceFormGame(pyspiel.load_game("goofspiel(num_cards=4,imp_info=True)"))


def _values_leaf_by_leaf(tree: SequenceFormGame, player: int, plans: list[np.ndarray],
                         probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reference, written here as a sum over the leaves, not a backward pass: a sequence's
    counterfactual value is the sum, over the leaves below it, of chance's and the other
    players' reach times the player's return times the probabilities (``probs``, by sequence)
    of the player's own actions after it; an information set's value is its sequences'
    values weighted by ``probs``."""
    info = tree.players[player]
    weight = tree.leaf_chance * tree.leaf_returns[player]
    for q, plan in enumerate(plans):
        if q != player:
            weight = weight * plan[tree.leaf_seqs[q]]
    value = np.zeros(info.num_sequences)
    seq, below = tree.leaf_seqs[player].copy(), np.ones(len(weight))
    while below.any():
        np.add.at(value, seq, weight * below)
        below = np.where(seq == 0, 0.0, below * probs[seq])
        seq = info.seq_parent[seq]
    node = np.bincount(info.seq_infoset[1:], weights=probs[1:] * value[1:],
                       minlength=info.num_infosets)
    return value, node


@pytest.mark.parametrize("tree", [LEDUC, GOOFSPIEL_4], ids=["leduc", "goofspiel_4"])
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), keep=st.floats(0.2, 0.8))
def test_sequence_passes_on_the_leaves_the_others_reach_are_the_whole_trees(tree, seed, keep):
    """On Leduc and goofspiel 4 (whose sequences but the last ones lead to no leaf directly)
    restricted at random, with random policies of allowed actions: the counterfactual values,
    information-set values, root value and realization plan that the passes by sequence
    compute on the leaves the other player's allowed actions reach equal the whole tree's,
    summed leaf by leaf (:func:`_values_leaf_by_leaf`); some leaves are left out. The best
    response within the allowed actions has the value the passes give, and no allowed action
    improves on it at any information set the passes visit."""
    from psro.extensive_form import sequence_passes as passes
    from psro.extensive_form.reached import others_reach

    rng = np.random.default_rng(seed)
    allowed = _restricted_at_random(tree, rng, keep)
    policies = []
    for mask in allowed:
        probs = mask * rng.uniform(0.1, 1.0, mask.shape)
        policies.append(probs / probs.sum(axis=1, keepdims=True))
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    leaves = others_reach(tree, allowed)
    assert not all(mask.all() for mask in leaves)
    for p in range(2):
        info = tree.players[p]
        part = passes.sequence_player(tree, p, allowed[p], leaves[p])
        by_seq = passes.by_sequence(tree, p, policies[p])
        np.testing.assert_array_equal(passes.plan(part, by_seq), plans[p])
        leaf = passes.leaf_values(part, p, plans)
        value, node, root = passes.values(part, leaf, by_seq)
        expected, expected_node = _values_leaf_by_leaf(tree, p, plans, by_seq)
        seqs = part.visited
        np.testing.assert_allclose(value[seqs], expected[seqs], rtol=0, atol=1e-14)
        np.testing.assert_allclose(node, expected_node, rtol=0, atol=1e-14)
        assert root == pytest.approx(expected[0], abs=1e-14)
        left_out = np.ones(info.num_sequences, dtype=bool)
        left_out[seqs] = False
        assert np.all(expected[left_out & part.allowed] == 0.0)
        best_value = passes.values(part, leaf)[2]
        best = passes.best_response(part, leaf)
        assert set(np.unique(best)) <= {0.0, 1.0} and np.all(best[~part.allowed][1:] == 0)
        reached, reached_node = _values_leaf_by_leaf(tree, p, plans, best)
        assert reached[0] == pytest.approx(best_value, abs=1e-14)
        visited = part.infoset[seqs]
        assert np.all(reached[seqs] <= reached_node[visited] + 1e-14)


@pytest.mark.parametrize("solver", TREE_SOLVERS)
def test_crossings_are_the_first_measurements_under_each_threshold(solver):
    pyspiel_game = pyspiel.load_game("kuhn_poker")
    tree = SequenceFormGame(pyspiel_game)
    result = solve_tree(tree, solver, (1e-2, 1e-3), time_budget_s=30)
    assert result.stop_reason == "thresholds"
    for threshold, crossing in result.crossings.items():
        first = next(r for r in result.curve if r["exploitability"] <= threshold)
        assert crossing == {"iterations": first["iterations"], "seconds": first["seconds"]}
    # the final profile's exploitability is OpenSpiel's
    assert exploitability(pyspiel_game, _openspiel_policy(tree, result.policies)) == \
        pytest.approx(result.curve[-1]["exploitability"], abs=1e-12)
    iterations = [r["iterations"] for r in result.curve]
    assert iterations == sorted(set(iterations))


def test_an_unknown_lp_method_is_refused_by_name():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(ValueError, match="unknown LP method 'barrier'; accepted: simplex, ipm"):
        SequenceFormLP(tree).solve(method="barrier")


def test_a_budget_of_iterations_stops_a_cfr_solver_there():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    result = solve_tree(tree, "dcfr", (1e-12,), max_iterations=37)
    assert result.stop_reason == "max_iterations" and result.curve[-1]["iterations"] == 37
    assert [r["iterations"] for r in result.curve][:10] == list(range(1, 11))


@pytest.mark.parametrize("solver", ["lp", "lp_ipm", "xdo"])
def test_an_lp_is_stopped_at_the_time_budget(solver, capsys):
    """The whole game's LP and ``xdo``'s restricted LPs get the budget's seconds as HiGHS's
    time limit: with a budget HiGHS cannot meet, the solver stops there with nothing measured
    (on liar's dice the whole LP by simplex takes about a second; on Leduc with 13 ranks,
    minutes), and the command prints its row with no crossing."""
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    result = solve_tree(tree, solver, (1e-3,), time_budget_s=1e-9)
    assert result.stop_reason == "time_budget"
    assert result.crossings == {} and result.curve == [] and result.policies == []
    assert solve_tree(tree, solver, (1e-3,), time_budget_s=30).stop_reason == "thresholds"
    assert main(["solve-tree", "kuhn_poker", "--solver", solver, "--thresholds", "1e-3",
                 "--time-budget", "1e-9"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{solver} | - | - | 0 | time_budget"


def test_an_lp_past_its_time_limit_is_a_timeout_error():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker"))
    with pytest.raises(LinearProgramTimeout, match="time limit of 0 s"):
        SequenceFormLP(tree).solve(time_limit=0.0)
    assert issubclass(LinearProgramTimeout, LinearProgramError)


def test_the_command_prints_a_row_per_solver_and_writes_the_curves(tmp_path, capsys):
    out = tmp_path / "solved.json"
    assert main(["solve-tree", "kuhn_poker", "--solver", "pcfr+", "--solver", "lp",
                 "--thresholds", "1e-3", "--out", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kuhn_poker: 58 nodes walked")
    assert lines[1] == "solver | to 0.001 | final exploitability | iterations | stopped"
    assert lines[2].startswith("pcfr+ | ") and lines[2].endswith("| thresholds")
    assert lines[3].startswith("lp | ") and "(1 it)" in lines[3]
    written = json.loads(out.read_text())
    assert [s["solver"] for s in written["solvers"]] == ["pcfr+", "lp"]
    assert "0.001" in written["solvers"][0]["crossings"]


@pytest.mark.parametrize("args, said", [
    (["kuhn_poker", "--solver", "pcfr"], "unknown --solver 'pcfr'; accepted: pcfr+, dcfr"),
    (["kuhn_poker", "--thresholds", "0.1,x"], "--thresholds must be positive numbers"),
    (["kuhn_poker", "--thresholds", "-1"], "--thresholds must be positive numbers"),
    (["kuhn_poker", "--time-budget", "0"], "--time-budget must be a positive number"),
    (["kuhn_poker(players=3)", "--solver", "lp"], "--solver lp needs a two-player zero-sum"),
    (["kuhn_poker(players=3)", "--solver", "lp_ipm"],
     "--solver lp_ipm needs a two-player zero-sum"),
    (["kuhn_poker(players=3)", "--solver", "xdo"], "--solver xdo needs a two-player zero-sum"),
    (["kuhn_poker(players=3)", "--solver", "xdo_cfr"],
     "--solver xdo_cfr needs a two-player zero-sum"),
    (["leduc_poker", "--max-nodes", "100"], "has more than --max-nodes 100 nodes"),
    (["kuhn_poker", "--cfr-share", "0"], "--cfr-share must be a number in (0, 1]; got 0"),
    (["kuhn_poker", "--cfr-share", "1.5"], "--cfr-share must be a number in (0, 1]; got 1.5"),
    (["kuhn_poker", "--cfr-share", "nan"], "--cfr-share must be a number in (0, 1]; got nan"),
    (["kuhn_poker", "--settle-growth", "-0.1"],
     "--settle-growth must be a number in [0, 1]; got -0.1"),
    (["kuhn_poker", "--settle-growth", "1.5"],
     "--settle-growth must be a number in [0, 1]; got 1.5"),
    (["kuhn_poker", "--settle-growth", "nan"],
     "--settle-growth must be a number in [0, 1]; got nan"),
])
def test_bad_input_is_one_line(args, said, capsys):
    assert main(["solve-tree", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "\n" not in err


def test_the_help_states_the_default_share_and_names_every_double_oracle(capsys):
    """``psro solve-tree --help`` is written apart from the solvers (the parser does not load
    them): its default ``--cfr-share`` is ``CFR_SHARE``, its default ``--settle-growth``
    ``SETTLE_GROWTH``, and it names every double oracle."""
    assert main(["solve-tree", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"(in (0, 1]; default {CFR_SHARE:g})" in out
    assert f"(in [0, 1]; default {SETTLE_GROWTH:g})" in out
    for name in DOUBLE_ORACLES:
        assert name in out
