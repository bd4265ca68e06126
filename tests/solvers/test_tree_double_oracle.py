"""XDO's double oracle as a whole-game solver (``psro solve-tree GAME --solver xdo``, and
``xdo_cfr`` and ``xdo_pcfr`` with CFR+ and PCFR+ restricted solves): it ends at the game's value
and at a profile OpenSpiel finds unexploitable (with CFR+ or PCFR+, it converges); its compiled
restriction of the game is :func:`compact_game`'s, and its compiled passes give what
the numpy code written apart gives (the improving actions of :mod:`psro.extensive_form.improving`
against an exact restricted equilibrium, the tree's best responses, the behaviour policy of an
LP's plan), on random restricted games."""

import numpy as np
import pyspiel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python.algorithms.exploitability import exploitability
from test_compiled_cfr import _random_policy, _restricted
from test_tabular_cfr import _openspiel_policy

from psro.cli import main
from psro.evaluation.exploitability import exact_exploitability
from psro.extensive_form.compact import (
    CompactPlayer,
    by_compact_sequence,
    compact_game,
    restrict,
    restriction_buffers,
)
from psro.extensive_form.double_oracle_kernel import (
    best_actions,
    completed_plan,
    improving_actions,
    live_part,
)
from psro.extensive_form.improving import improving_actions as numpy_improving_actions
from psro.extensive_form.improving import prepared_players
from psro.extensive_form.reached import live
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_lp import SequenceFormLP
from psro.extensive_form.sequence_passes import behaviour
from psro.extensive_form.tree_double_oracle import EXACT, TreeDoubleOracle
from psro.extensive_form.tree_solvers import solve_tree

TREES = {name: SequenceFormGame(pyspiel.load_game(name))
         for name in ("kuhn_poker", "leduc_poker", "liars_dice(dice_sides=3)")}


@pytest.mark.parametrize("game, value, tolerance", [("kuhn_poker", -1 / 18, 1e-9),
                                                    ("leduc_poker", -0.0856064, 1e-6)])
def test_it_ends_at_the_game_value_and_an_unexploitable_profile(game, value, tolerance):
    """Kuhn is worth -1/18 to player 0, Leduc -0.0856064 (published); OpenSpiel measures the
    last restricted equilibrium unexploitable, and each iteration's exploitability is
    OpenSpiel's measure of that iteration's equilibrium."""
    pyspiel_game = pyspiel.load_game(game)
    tree = SequenceFormGame(pyspiel_game)
    oracle = TreeDoubleOracle(tree)
    while not oracle.finished:
        measured = oracle.step()
        reference = exploitability(pyspiel_game, _openspiel_policy(tree, oracle.policies()))
        assert measured == pytest.approx(reference, abs=1e-12)
        assert oracle.iterations < 40
    assert oracle.value == pytest.approx(value, abs=tolerance)
    assert oracle.exploitability < 1e-9
    assert 0 < oracle.share() < 1


@pytest.mark.parametrize("variant, settled", [("cfr+", None), ("pcfr+", None),
                                               ("cfr+", "dcfr+")])
@pytest.mark.parametrize("game, target", [("kuhn_poker", 1e-6), ("leduc_poker", 1e-4)])
def test_with_cfr_restricted_solves_it_converges(game, target, variant, settled):
    """With warm-started CFR+ or PCFR+ restricted solves, or CFR+ ones and DCFR+ ones carrying
    their average across restricted games once they settle: each iteration's exploitability is
    OpenSpiel's measure of its average profile, the restricted game only grows, and the target
    is reached in a few dozen iterations."""
    pyspiel_game = pyspiel.load_game(game)
    tree = SequenceFormGame(pyspiel_game)
    oracle = TreeDoubleOracle(tree, variant=variant, settled_variant=settled)
    shares = []
    while oracle.exploitability > target:
        measured = oracle.step()
        reference = exploitability(pyspiel_game, _openspiel_policy(tree, oracle.policies()))
        assert measured == pytest.approx(reference, abs=1e-12)
        shares.append(oracle.share())
        assert oracle.iterations <= 40
    assert shares == sorted(shares)
    assert oracle.settled == (settled is not None)


@pytest.mark.parametrize("variant", ["cfr+", "pcfr+"])
def test_a_target_exploitability_ends_a_long_restricted_solve_early(variant):
    """On Leduc, asked to stop below 1e-4, the restricted solves reach it with fewer CFR
    iterations than without (its checks in the whole game end the solve that crosses it),
    and the exploitability returned is OpenSpiel's."""
    pyspiel_game = pyspiel.load_game("leduc_poker")
    tree = TREES["leduc_poker"]
    counts = []
    for stop_below in (0.0, 1e-4):
        oracle = TreeDoubleOracle(tree, variant=variant)
        while oracle.step(stop_below=stop_below) > 1e-4:
            assert oracle.iterations <= 40
        reference = exploitability(pyspiel_game, _openspiel_policy(tree, oracle.policies()))
        assert oracle.exploitability == pytest.approx(reference, abs=1e-12)
        counts.append(oracle.restricted_iterations)
    assert counts[1] < counts[0]


def test_the_cfr_share_sets_how_tightly_each_restricted_game_is_solved():
    """A smaller ``cfr_share`` solves each restricted game further (more CFR+ iterations a
    double-oracle iteration on Leduc to 1e-4, without a target that would end a solve early),
    the runs end where OpenSpiel measures them, and ``solve_tree`` passes the share on (its
    iterations to each threshold are the oracle's run given that target); a share outside
    (0, 1], a ``settle_growth`` outside [0, 1] and a settled variant without a variant to
    come before it are refused by name."""
    pyspiel_game = pyspiel.load_game("leduc_poker")
    tree = TREES["leduc_poker"]
    per_iteration, iterations = [], []
    for share in (0.1, 0.9):
        for stop_below in (0.0, 1e-4):
            oracle = TreeDoubleOracle(tree, variant="cfr+", cfr_share=share)
            while oracle.step(stop_below=stop_below) > 1e-4:
                assert oracle.iterations <= 60
            reference = exploitability(pyspiel_game,
                                       _openspiel_policy(tree, oracle.policies()))
            assert oracle.exploitability == pytest.approx(reference, abs=1e-12)
            if stop_below == 0.0:
                per_iteration.append(oracle.restricted_iterations / oracle.iterations)
                iterations.append(oracle.iterations)
        solved = solve_tree(tree, "xdo_cfr", (1e-4,), cfr_share=share)
        assert solved.crossings[1e-4]["iterations"] == oracle.iterations
    assert per_iteration[0] > 2 * per_iteration[1]
    assert iterations[0] < iterations[1]
    for bad in (0.0, -0.3, 1.5, float("nan")):
        with pytest.raises(ValueError, match="cfr_share must be in"):
            TreeDoubleOracle(tree, variant="cfr+", cfr_share=bad)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="settle_growth must be in"):
            TreeDoubleOracle(tree, variant="cfr+", settled_variant="dcfr+", settle_growth=bad)
    with pytest.raises(ValueError, match="settled_variant needs a CFR-family variant"):
        TreeDoubleOracle(tree, settled_variant="dcfr+")


def test_a_cfr_restricted_solve_stops_at_the_time_budget():
    tree = TREES["leduc_poker"]
    result = solve_tree(tree, "xdo_cfr", (1e-12,), time_budget_s=0.05)
    assert result.stop_reason == "time_budget"
    assert result.curve[-1]["exploitability"] > 1e-12


def test_the_solver_row_ends_at_an_exact_equilibrium_of_liars_dice_with_three_sides():
    tree = TREES["liars_dice(dice_sides=3)"]
    result = solve_tree(tree, "xdo", (1e-3, 1e-9))
    assert result.stop_reason == "thresholds"
    policies = _openspiel_policy(tree, result.policies)
    assert exploitability(tree.game, policies) < 1e-9


def _lp_equilibrium(tree: SequenceFormGame, allowed: list[np.ndarray]):
    raw, _ = SequenceFormLP(tree).solve_plans(allowed)
    return raw, [behaviour(tree, p, plan, allowed[p]) for p, plan in enumerate(raw)]


@settings(max_examples=12, deadline=None)
@given(game=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       keep=st.floats(0.2, 0.9))
def test_the_compiled_passes_agree_with_the_numpy_code_on_random_restricted_games(game, seed,
                                                                                   keep):
    """The part of the game both restricted players reach is :func:`live`'s. Against the
    restricted LP's equilibrium of a random restricted game: the completed plans
    are the behaviour policies' realization plans; each player's gain is its best-response gain
    by :func:`exact_exploitability`; the actions marked are the improving actions of
    :mod:`psro.extensive_form.improving` that the restricted game lacks (ties to 1e-12 of the
    largest regret aside)."""
    tree = TREES[game]
    allowed = _restricted(tree, seed, keep)
    raw, policies = _lp_equilibrium(tree, allowed)
    whole = compact_game(tree, [tree.uniform_policy(p) > 0 for p in range(2)])
    scale = float(np.abs(tree.leaf_returns).max())
    tree_plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    gains = exact_exploitability(tree, tree_plans).gains
    numpy_found = numpy_improving_actions(tree, prepared_players(tree), policies,
                                          EXACT * scale, tree_plans, allowed)
    compact_allowed = by_compact_sequence(tree, whole, allowed)
    parts = live_part(*whole.leaf_seqs, *compact_allowed,
                      *(getattr(player, name) for player in whole.players
                        for name in ("start", "end", "parent")))
    reached = live(tree, allowed)
    assert np.array_equal(parts[0], reached.leaves[whole.leaves])
    plans = []
    for p, player in enumerate(whole.players):
        assert np.array_equal(parts[1 + 2 * p], reached.sequences[p][player.sequences])
        assert np.array_equal(parts[2 + 2 * p], reached.infosets[p][player.infosets])
        plan = completed_plan(raw[p][player.sequences], compact_allowed[p], player.start,
                              player.end, player.parent)
        np.testing.assert_allclose(plan, tree_plans[p][player.sequences], atol=1e-12)
        plans.append(plan)
    for p, player in enumerate(whole.players):
        added = np.zeros(len(player.sequences), dtype=bool)
        gain, marked = improving_actions(whole.leaf_seqs[p], whole.leaf_seqs[1 - p],
                                         whole.leaf_weights[p], plans[1 - p], plans[p],
                                         player.start, player.end, player.parent,
                                         compact_allowed[p], EXACT * scale, added)
        assert gain == pytest.approx(gains[p], abs=1e-12)
        assert marked == added.sum()
        info = tree.players[p]
        seqs = player.sequences[added]
        mine = np.zeros_like(allowed[p])
        mine[info.seq_infoset[seqs], info.seq_action[seqs]] = True
        theirs = numpy_found[p] & ~allowed[p]
        assert np.array_equal(mine.any(axis=1), theirs.any(axis=1))
        assert not (mine & allowed[p]).any()
        assert (mine & ~theirs).sum() + (theirs & ~mine).sum() <= 2 * _near_ties(theirs)


@settings(max_examples=12, deadline=None)
@given(game=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000),
       keep=st.floats(0.2, 0.9))
def test_the_compiled_restriction_is_the_compact_game_of_the_restricted_game(game, seed, keep):
    """:func:`restrict` on the whole game's compact arrays gives, array for array, what
    :func:`compact_game` builds from the tree for the same random restricted game (written
    into buffers that held another restricted game's arrays)."""
    tree = TREES[game]
    allowed = _restricted(tree, seed, keep)
    whole = compact_game(tree, [tree.uniform_policy(p) > 0 for p in range(2)])
    compact_allowed = by_compact_sequence(tree, whole, allowed)
    buffers = restriction_buffers(whole)
    restrict(whole, (np.ones_like(compact_allowed[0]), np.ones_like(compact_allowed[1])),
             buffers)  # the whole game first: the buffers then hold other numbers
    mine, theirs = restrict(whole, compact_allowed, buffers), compact_game(tree, allowed)
    assert np.array_equal(mine.leaves, theirs.leaves)
    for p in range(2):
        for name in CompactPlayer._fields:
            assert np.array_equal(getattr(mine.players[p], name),
                                  getattr(theirs.players[p], name)), name
        assert np.array_equal(mine.leaf_seqs[p], theirs.leaf_seqs[p])
        assert np.array_equal(mine.leaf_weights[p], theirs.leaf_weights[p])


def _near_ties(found: np.ndarray) -> int:
    """How many information sets have more than one action found (a tie, which rounding may
    break another way)."""
    return int((found.sum(axis=1) > 1).sum())


@settings(max_examples=10, deadline=None)
@given(game=st.sampled_from(sorted(TREES)), seed=st.integers(0, 10_000))
def test_a_best_response_is_the_trees(game, seed):
    """The value of the actions :func:`best_actions` marks is the tree's best-response value
    against a random opponent, and playing them attains it."""
    tree = TREES[game]
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    policies = _random_policy(tree, legal, seed)
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    whole = compact_game(tree, legal)
    for p, player in enumerate(whole.players):
        chosen = np.zeros(len(player.sequences), dtype=bool)
        value = best_actions(whole.leaf_seqs[p], whole.leaf_seqs[1 - p], whole.leaf_weights[p],
                             plans[1 - p][whole.players[1 - p].sequences], player.start,
                             player.end, player.parent, chosen)
        assert value == pytest.approx(tree.best_response(p, plans)[1], abs=1e-12)
        info = tree.players[p]
        seqs = player.sequences[chosen]
        assert not chosen[0]
        response = np.zeros((info.num_infosets, tree.num_actions))
        response[info.seq_infoset[seqs], info.seq_action[seqs]] = 1.0
        assert np.all(response.sum(axis=1) == 1)
        mine = [None, None]
        mine[p], mine[1 - p] = tree.realization_plan(p, response), plans[1 - p]
        assert tree.expected_returns(mine)[p] == pytest.approx(value, abs=1e-12)


def test_it_refuses_a_game_that_is_not_two_player_zero_sum():
    tree = SequenceFormGame(pyspiel.load_game("kuhn_poker(players=3)"))
    with pytest.raises(ValueError, match="needs a two-player zero-sum game"):
        TreeDoubleOracle(tree)


def test_the_command_runs_it(capsys):
    assert main(["solve-tree", "kuhn_poker", "--solver", "xdo", "--thresholds", "1e-6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].startswith("xdo | ") and lines[2].endswith("| thresholds")


def test_the_command_passes_the_cfr_share_on(capsys):
    """``--cfr-share`` reaches the double oracle: its iterations to 1e-4 on Leduc are those of
    ``solve_tree`` with that share, which differ from the default's."""
    tree = TREES["leduc_poker"]
    rows = {}
    for share in (None, 0.8):
        extra = [] if share is None else ["--cfr-share", str(share)]
        assert main(["solve-tree", "leduc_poker", "--solver", "xdo_cfr", "--thresholds", "1e-4",
                     *extra]) == 0
        rows[share] = capsys.readouterr().out.splitlines()[2]
        solved = solve_tree(tree, "xdo_cfr", (1e-4,),
                            **({} if share is None else {"cfr_share": share}))
        assert f"({solved.crossings[1e-4]['iterations']:,} it)" in rows[share]
    assert rows[None].split("(")[1] != rows[0.8].split("(")[1]


def test_the_command_passes_the_settle_growth_on(capsys):
    """``--settle-growth`` reaches ``xdo_dcfr+``: its iterations to 1e-3 and 1e-4 on Leduc are
    those of ``solve_tree`` with that settle growth (1: settled from the second restricted game
    on), which differ from the default's."""
    tree = TREES["leduc_poker"]
    rows = {}
    for growth in (None, 1.0):
        extra = [] if growth is None else ["--settle-growth", str(growth)]
        assert main(["solve-tree", "leduc_poker", "--solver", "xdo_dcfr+", "--thresholds",
                     "1e-3,1e-4", *extra]) == 0
        rows[growth] = capsys.readouterr().out.splitlines()[2]
        solved = solve_tree(tree, "xdo_dcfr+", (1e-3, 1e-4),
                            **({} if growth is None else {"settle_growth": growth}))
        for threshold in (1e-3, 1e-4):
            assert f"({solved.crossings[threshold]['iterations']:,} it)" in rows[growth]
    assert rows[None].split(" | ")[1:3] != rows[1.0].split(" | ")[1:3]
