"""PSRO variants (--algorithm): anytime (least exploitable mixture by LP), rectified (PSRO-rN)
and xdo (restricted game on the sequence form), against independent checks; both oracles;
resume; refusals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from conftest import as_written_before_config_digests, numbers
from hypothesis import given, settings
from hypothesis import strategies as st

import games
import psro
import solvers
from psro.algorithms.rectified import RectifiedAlgorithm
from psro.cli import main
from psro.errors import ConfigError
from psro.evaluation.exact import PlanStack


def test_anytime_never_increases_and_beats_psro_on_leduc():
    rows = psro.PSRO("leduc_poker", "exact", "nash", algorithm="anytime").run(iterations=15)
    exploitability = [r["exploitability"] for r in rows]
    assert all(b <= a + 1e-9 for a, b in zip(exploitability, exploitability[1:],
                                              strict=False))
    plain = psro.PSRO("leduc_poker", "exact", "nash").run(iterations=15)
    assert exploitability[-1] < plain[-1]["exploitability"]  # 0.38 against 0.71 here


def test_anytime_mixture_is_the_least_exploitable_one():
    """The LP's mixture against 2,000 random mixtures of the same population and against
    the Nash mixture of the payoff table, all measured by exact best responses."""
    run = psro.PSRO("kuhn_poker", "exact", "nash", algorithm="anytime")
    run.run(iterations=3)
    tree = run.tree
    stack = PlanStack(tree)
    plans = [stack.plans(p, run.population[p]) for p in range(2)]

    def opponent_value(p, w):  # the opponent's best-response value against p's mixture
        mixed = [None, None]
        mixed[p] = w @ plans[p]
        return tree.best_response(1 - p, mixed)[1]

    rng = np.random.default_rng(0)
    for p in range(2):
        best = opponent_value(p, run.mixtures[p])
        samples = rng.dirichlet(np.ones(len(run.population[p])), size=2000)
        assert best <= min(opponent_value(p, w) for w in samples) + 1e-9
        nash_mixture = solvers.get("nash")(run.table.as_game())[p]
        assert best <= opponent_value(p, np.asarray(nash_mixture)) + 1e-9


def test_rectified_targets_follow_the_beats_or_ties_rule():
    A = np.array([[1.0, 1.0, -1.0], [2.0, 0.0, 0.0]])  # player 0's payoffs, zero-sum
    state = SimpleNamespace(table=SimpleNamespace(values=np.stack([A, -A])),
                            mixtures=[np.array([0.25, 0.75]), np.array([0.5, 0.2, 0.3])])
    targets = RectifiedAlgorithm(None, "nash").targets(state)
    by = {(t.player, t.tag): t.mixtures for t in targets}
    assert sorted(by) == [(0, 1), (0, 2), (1, 1), (1, 2), (1, 3)]
    # member 0 of player 0 beats or ties columns 0 and 1: weights 0.5, 0.2 renormalised
    assert by[(0, 1)][1] == pytest.approx([0.5 / 0.7, 0.2 / 0.7, 0.0])
    assert by[(0, 2)][1] == pytest.approx([0.5, 0.2, 0.3])  # beats or ties all three
    # player 1's column 0 beats or ties no row (-1, -2): it falls back to the Nash weights;
    # column 1 beats or ties row 1 only (-1 < 0, 0 = 0); column 2 both rows (1, 0)
    assert by[(1, 1)][0] == pytest.approx([0.25, 0.75])
    assert by[(1, 2)][0] == pytest.approx([0.0, 1.0])
    assert by[(1, 3)][0] == pytest.approx([0.25, 0.75])


def test_rectified_reaches_kuhn_equilibrium_with_several_responses_per_iteration():
    rows = psro.PSRO("kuhn_poker", "exact", "nash", algorithm="rectified").run(iterations=8)
    assert rows[-1]["exploitability"] < 1e-9
    assert rows[-1]["population_size"] > 9  # more than one new member per iteration
    assert rows[-1]["value_p0"] == pytest.approx(-1 / 18, abs=1e-9)


def test_xdo_solves_kuhn_and_leduc_and_stops_when_the_restricted_game_is_complete(capsys,
                                                                                  tmp_path):
    kuhn = psro.PSRO("kuhn_poker", "exact", algorithm="xdo")
    rows = kuhn.run(iterations=30)
    assert kuhn.stop_reason == "restricted_game_complete" and rows[-1]["iteration"] < 30
    assert rows[-1]["exploitability"] < 1e-12  # OpenSpiel-independent exact best responses
    assert rows[-1]["value_p0"] == pytest.approx(-1 / 18, abs=1e-9)
    leduc = psro.PSRO("leduc_poker", "exact", algorithm="xdo").run(iterations=20)
    assert min(r["exploitability"] for r in leduc) <= 1e-3  # XDO's published target
    assert main(["run", "--game", "kuhn_poker", "--algorithm", "xdo", "--out",
                 str(tmp_path / "x")]) == 0
    assert "done (restricted_game_complete)" in capsys.readouterr().out
    loaded = psro.load_run(tmp_path / "x")  # the restricted equilibrium is the meta-policy
    newest = loaded.population[0][-1]
    assert newest.metadata["oracle"] == "xdo_restricted_nash"
    assert loaded.mixtures[0][-1] == 1.0
    from open_spiel.python.algorithms import exploitability as os_exploitability

    game = __import__("pyspiel").load_game("kuhn_poker")
    assert os_exploitability.nash_conv(game, loaded.meta_policy()) < 1e-9


def test_xdo_with_the_ppo_oracle_plays_the_equilibrium_as_a_table(tmp_path):
    rows = psro.PSRO("kuhn_poker", "ppo", algorithm="xdo", seed=2,
                     ppo={"env_steps": 2000}, out=tmp_path / "a").run(iterations=2)
    run = psro.load_run(tmp_path / "a")
    kinds = [m.metadata.get("oracle") for m in run.population[1]]
    assert kinds == ["uniform", "ppo", "xdo_restricted_nash", "ppo", "xdo_restricted_nash"]
    again = psro.PSRO("kuhn_poker", "ppo", algorithm="xdo", seed=2,
                      ppo={"env_steps": 2000}).run(iterations=2)
    assert numbers(again) == numbers(rows)


@pytest.mark.parametrize("algorithm,game", [
    ("anytime", "kuhn_poker"), ("rectified", "kuhn_poker"), ("anytime", "leduc_poker"),
    ("rectified", "leduc_poker"), ("xdo", "leduc_poker"), ("jpsro", "kuhn_poker(players=3)")])
def test_variants_resume_to_identicalnumbers(algorithm, game, tmp_path):
    full = psro.PSRO(game, "exact", algorithm=algorithm).run(iterations=6)  # default solvers
    psro.PSRO(game, "exact", algorithm=algorithm, out=tmp_path / "a").run(iterations=3)
    resumed = psro.PSRO.resume(tmp_path / "a").run(iterations=6)
    assert numbers(resumed) == numbers(full)
    if algorithm == "jpsro":
        assert [r["gap"] for r in resumed] == [r["gap"] for r in full]
    assert psro.load_run(tmp_path / "a").config.algorithm == algorithm


@pytest.mark.parametrize("algorithm", ["anytime", "rectified"])
def test_variants_run_with_ppo(algorithm, tmp_path):
    rows = psro.PSRO("kuhn_poker", "ppo", "nash", algorithm=algorithm, seed=1,
                     ppo={"env_steps": 1500}, out=tmp_path / "ppo").run(iterations=2)
    assert rows[-1]["exploitability"] < rows[0]["exploitability"]
    again = psro.PSRO("kuhn_poker", "ppo", "nash", algorithm=algorithm, seed=1,
                      ppo={"env_steps": 1500}).run(iterations=2)
    assert numbers(again) == numbers(rows)


@pytest.mark.parametrize("argv,match", [
    (["--algorithm", "xdo2"],
     "unknown algorithm 'xdo2'; accepted: psro, anytime, rectified, xdo, jpsro"),
    (["--algorithm", "jpsro", "--game", "leduc_poker", "--oracle", "ppo", "--config",
      "small.toml"], "algorithm 'jpsro' (its gap is measured on the walked tree)"),
    (["--algorithm", "jpsro", "--meta-solver", "cce", "--meta-solver-option",
      "objective=max"], "objective must be one of entropy, gini, welfare; got 'max'"),
    (["--algorithm", "pipeline"], "algorithm 'pipeline' needs an oracle that trains its best "
                                  "responses in environment steps (warm starts, budgets, "
                                  "plateaus) (it trains learners in chunks until they plateau)"
                                  "; oracle 'exact' does not (oracles that do: ppo, grpo)"),
    (["--algorithm", "pipeline", "--oracle", "ppo", "--pipeline-width", "0"],
     "pipeline_width must be an integer from 1 to 64; got 0"),
    (["--algorithm", "pipeline", "--oracle", "ppo", "--pipeline-width", "100000"],
     "pipeline_width must be an integer from 1 to 64; got 100,000"),
    # settings that no part of the run reads are refused, for every algorithm and option
    (["--algorithm", "xdo", "--meta-solver", "alpharank"],
     "meta_solver has no effect in this run: algorithm 'xdo' reads no meta-solver"),
    (["--algorithm", "xdo", "--meta-solver-option", "seed=3"],
     "meta_solver_options has no effect in this run: algorithm 'xdo' reads no meta-solver"),
    (["--pipeline-width", "3"], "pipeline_width has no effect in this run: it is a setting of "
                                "algorithm 'pipeline', and this run's algorithm is 'psro'"),
    (["--algorithm", "rectified", "--anytime-rounds", "5"],
     "anytime_rounds has no effect in this run: it is a setting of algorithm 'anytime'"),
    (["--anytime-episodes", "64"],
     "anytime_episodes has no effect in this run: it is a setting of algorithm 'anytime'"),
    (["--ppo", "env_steps=5000"], "ppo has no effect in this run: oracle 'exact' trains no PPO"),
    (["--config", "mc.toml"], "monte_carlo has no effect in this run: payoffs are computed "
                              "exactly"),
    (["--algorithm", "pipeline", "--oracle", "ppo", "--ppo", "warm_start=false"],
     "ppo.warm_start must be true"),
    (["--algorithm", "xdo", "--game", "leduc_poker", "--oracle", "ppo", "--config",
      "small.toml"], "algorithm 'xdo' (its restricted game is the walked tree)"),
    (["--algorithm", "anytime", "--game", "kuhn_poker(players=3)", "--meta-solver", "prd"],
     "algorithm 'anytime' needs a game of 2 players; 'kuhn_poker(players=3)' has 3"),
    (["--algorithm", "anytime", "--game", "random_general_sum"],
     "algorithm 'anytime' needs a zero-sum game; 'random_general_sum' is not one"),
    (["--algorithm", "rectified", "--meta-solver", "prd"],
     "algorithm 'rectified' rectifies a Nash meta-strategy"),
    (["--algorithm", "anytime", "--game", "leduc_poker", "--oracle", "exact",
      "--config", "small.toml"], "where the game is too large to walk; with an exact oracle"),
])
def test_variants_that_cannot_run_are_refused_before_any_work(argv, match, tmp_path, capsys,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.toml").write_text("max_nodes = 1000\n")
    (tmp_path / "mc.toml").write_text("[monte_carlo]\ntolerance = 0.05\n")
    game = [] if "--game" in argv else ["--game", "kuhn_poker"]
    assert main(["run", *game, *argv, "--out", "X"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0], err
    assert not (tmp_path / "X").exists()


def test_resume_refuses_a_new_algorithm(tmp_path, capsys):
    psro.PSRO("kuhn_poker", out=tmp_path / "r").run(iterations=1)
    assert main(["run", "--resume", "--out", str(tmp_path / "r"), "--algorithm",
                 "anytime"]) == 2
    assert "--algorithm cannot change" in capsys.readouterr().err


def _action_distribution(run) -> np.ndarray:
    """The joint over members of a one-shot game turned into a distribution over action
    profiles (each member's action distribution is its table's only row)."""
    joint = run.parts.algorithm.joint
    n = joint.ndim
    num_actions = run.population[0][0].probs.shape[1]
    out = np.zeros((num_actions,) * n)
    for index in np.argwhere(joint > 0):
        product = np.ones(())
        for p, k in enumerate(index):
            product = np.multiply.outer(product, run.population[p][k].probs[0])
        out += joint[tuple(index)] * product
    return out


def test_jpsro_on_a_general_sum_matrix_game_reaches_a_cce():
    """The action distribution the joint over members induces is a CCE of the full game: no
    pure deviation gains (computed here from the game's own payoff matrices), and the run's
    `gap` column is that largest gain."""
    game = "random_general_sum(n=6,seed=3)"
    run = psro.PSRO(game, algorithm="jpsro", iterations=12)
    rows = run.run()
    assert run.config.meta_solver == "cce" and rows[-1]["gap_kind"] == "cce"
    matrix = games.load(game).pyspiel_game
    u = [np.array(matrix.row_utilities()), np.array(matrix.col_utilities())]
    mu = _action_distribution(run)
    gains = [max(float(np.sum(mu.sum(axis=0) * u[0][j]) - np.sum(mu * u[0])) for j in range(6)),
             max(float(np.sum(mu.sum(axis=1) * u[1][:, j]) - np.sum(mu * u[1]))
                 for j in range(6))]
    assert max(gains) <= 1e-6
    assert rows[-1]["gap"] == pytest.approx(max(max(gains), 0.0), abs=1e-9)
    assert rows[0]["gap"] > 0.1  # the uniform profile is far from a CCE in this game


def test_jpsro_gap_matches_openspiel_cce_dist_on_three_player_kuhn():
    """Each player's deviation value against the joint, from OpenSpiel's own
    `pyspiel.cce_dist` on the members as OpenSpiel policies, against the run's gap columns."""
    import pyspiel
    from open_spiel.python import policy as os_policy

    run = psro.PSRO("kuhn_poker(players=3)", algorithm="jpsro", iterations=4)
    rows = run.run()
    game = pyspiel.load_game("kuhn_poker(players=3)")
    tree = run.tree
    joint, values = run.parts.algorithm.joint, run.table.values

    def member_policy(p, k):
        table = os_policy.TabularPolicy(game, players=[p])
        probs = run.population[p][k].probs
        for i, key in enumerate(tree.players[p].keys):
            row = table.policy_for_key(key)
            row[:] = probs[i, :row.size]
        return table

    policies = [[member_policy(p, k) for k in range(len(run.population[p]))] for p in range(3)]
    for p in range(3):
        mu = []
        for index in np.argwhere(joint > 0):
            joint_policy = os_policy.merge_tabular_policies(
                [policies[q][k] for q, k in enumerate(index)], game)
            mu.append((float(joint[tuple(index)]), os_policy.python_policy_to_pyspiel_policy(
                joint_policy)))
        info = pyspiel.cce_dist(game, mu, p, prob_cut_threshold=0.0)
        gain = max(info.best_response_values[0] - float(np.sum(joint * values[p])), 0.0)
        assert rows[-1][f"gap_p{p}"] == pytest.approx(gain, abs=1e-9)


def test_jpsro_ce_trains_one_response_per_recommendation_and_keeps_the_largest_gap():
    run = psro.PSRO("kuhn_poker(players=3)", algorithm="jpsro", meta_solver="ce",
                    meta_solver_options={"objective": "gini"}, iterations=3)
    rows = run.run()
    assert rows[-1]["gap_kind"] == "ce"
    assert all(len(pop) <= 4 for pop in run.population)  # at most one new member a player
    targets = run.parts.algorithm.targets(run.state)
    for p in range(3):
        tags = sorted(t.tag for t in targets if t.player == p)
        assert tags == [k + 1 for k in np.flatnonzero(run.mixtures[p] > 0)]
    # CE gap of the joint, player by player, recomputed here from the exact best responses
    # of the tree against each recommendation's conditional
    from psro.algorithms.jpsro import recommendation
    from psro.evaluation.exact import PlanStack

    stack = PlanStack(run.tree)
    for p in range(3):
        gain = 0.0
        for k in np.flatnonzero(run.mixtures[p] > 0):
            weights = recommendation(run.parts.algorithm.joint, p, int(k))
            reach = stack.correlated_reach(run.population, p, weights)
            _, value = run.tree.best_response_to_reach(p, reach)
            gain += max(value - float(np.sum(weights * run.table.values[p])), 0.0)
        assert rows[-1][f"gap_p{p}"] == pytest.approx(gain, abs=1e-12)


def test_jpsro_with_ppo_draws_correlated_opponents(tmp_path):
    rows = psro.PSRO("kuhn_poker(players=3)", "ppo", algorithm="jpsro", seed=3,
                     ppo={"env_steps": 1500}, out=tmp_path / "a").run(iterations=2)
    again = psro.PSRO("kuhn_poker(players=3)", "ppo", algorithm="jpsro", seed=3,
                      ppo={"env_steps": 1500}).run(iterations=2)
    assert [r["gap"] for r in again] == [r["gap"] for r in rows]
    run = psro.load_run(tmp_path / "a")
    assert run.joint is not None and run.joint.shape == run.payoffs.shape
    assert np.allclose(solvers.marginals(run.joint)[1], run.mixtures[1])
    from psro.reports import write_report

    md, _ = write_report([tmp_path / "a"], tmp_path / "report")
    text = md.read_text()
    assert (tmp_path / "report" / "gap.png").is_file() and "gap.png" in text
    assert "| iteration | population | exploitability | nash_conv | gap | wall_time_s |" in text


def test_rollouts_draw_correlated_profiles_with_their_probabilities():
    from psro.rl.rollout import Rollouts

    class Fixed:
        def __init__(self):
            self.observes = False

    profiles = np.array([[0, 0, 0], [0, 1, 1], [0, 2, 0]])
    probs = np.array([0.5, 0.3, 0.2])
    import pyspiel

    games = Rollouts(pyspiel.load_game("kuhn_poker(players=3)"),
                     [None, [Fixed()] * 3, [Fixed()] * 3], [None, None, None], 4000,
                     np.random.default_rng(0), env_seed=1, joint=(profiles, probs))
    drawn = games.choice[:, 1:]
    rows = [tuple(r) for r in drawn]
    assert set(rows) <= {(0, 0), (1, 1), (2, 0)}  # only the joint's profiles, never (1, 0)
    freq = np.array([rows.count(r) for r in [(0, 0), (1, 1), (2, 0)]]) / len(rows)
    assert np.allclose(freq, probs, atol=0.03)


def test_restricted_cfr_on_kuhn_matches_openspiel_nash_conv_and_the_game_value():
    from open_spiel.python.algorithms import exploitability as os_exploitability

    from psro.extensive_form.restricted_cfr import solve_restricted

    run = psro.PSRO("kuhn_poker")
    tree = run.tree
    allowed = [np.array([[a in legal for a in range(tree.num_actions)] for legal in
                         tree.players[p].legal]) for p in range(2)]
    solution = solve_restricted(tree, allowed, tolerance=2e-3)
    assert solution.nash_conv <= 2e-3 and solution.iterations % 25 == 0
    plans = [tree.realization_plan(p, solution.policies[p]) for p in range(2)]
    assert tree.expected_returns(plans)[0] == pytest.approx(-1 / 18, abs=2e-3)
    policies = psro.extensive_form.policies
    members = [[policies.TabularPolicy(p, solution.policies[p])] for p in range(2)]
    policy = policies.MetaPolicy(tree, members, [np.ones(1), np.ones(1)])
    theirs = os_exploitability.nash_conv(tree.game, policy)
    assert theirs == pytest.approx(solution.nash_conv, abs=1e-12)


def test_xdo_on_three_player_kuhn_uses_cfr_and_converges():
    from open_spiel.python.algorithms import exploitability as os_exploitability

    run = psro.PSRO("kuhn_poker(players=3)", algorithm="xdo")
    rows = run.run(iterations=14)
    assert run.stop_reason == "restricted_game_complete"
    assert rows[-1]["nash_conv"] <= 1e-3
    newest = run.population[0][-1].metadata
    assert newest["oracle"] == "xdo_restricted_nash" and newest["cfr_iterations"] > 0
    theirs = os_exploitability.nash_conv(run.tree.game, run.meta_policy())
    assert theirs == pytest.approx(rows[-1]["nash_conv"], abs=1e-9)


def test_xdo_first_best_responses_answer_the_uniform_policy():
    """As the XDO authors start: iteration 1's responses are best responses to uniform random
    play (OpenSpiel's value), not to a restricted game of lowest legal actions."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability as os_exploitability

    run = psro.PSRO("liars_dice(dice_sides=3)", algorithm="xdo")
    run.run(iterations=1)
    uniform = os_policy.UniformRandomPolicy(run.tree.game)
    for p in range(2):
        theirs = os_exploitability.best_response(run.tree.game, uniform, p)
        response = run.population[p][1]
        assert response.metadata["oracle"] == "exact"
        assert response.metadata["br_value"] == pytest.approx(theirs["best_response_value"],
                                                              abs=1e-12)
    assert run.metrics[0]["exploitability"] == pytest.approx(
        os_exploitability.exploitability(run.tree.game, uniform), abs=1e-12)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(calls=st.lists(st.tuples(st.integers(0, 1), st.integers(0, 8), st.booleans()),
                      min_size=1, max_size=12),
       seed=st.integers(0, 10_000))
def test_xdo_restricted_games_kept_and_extended_are_the_members_actions(calls, seed):
    """Whatever order populations are asked in (grown, shrunk, asked again, another member list
    of the same length), a restricted game of best responses is the union of the members'
    positive-probability actions with the lowest legal action where none acts, computed here
    from the members alone; uniform and equilibrium members add nothing."""
    from psro.algorithms.xdo import EQUILIBRIUM, XDOAlgorithm
    from psro.extensive_form.policies import TabularPolicy

    tree = psro.PSRO("leduc_poker").tree
    rng = np.random.default_rng(seed)

    def member(p: int, k: int) -> TabularPolicy:
        legal = tree.uniform_policy(p) > 0
        probs = legal * (rng.random(legal.shape) < 0.3)
        probs = probs / np.maximum(probs.sum(axis=1, keepdims=True), 1)
        oracle = ("exact", "uniform", EQUILIBRIUM)[k % 3]
        return TabularPolicy(p, probs, metadata={"oracle": oracle})

    xdo = XDOAlgorithm(tree, solver="cfr")
    pools = [[member(p, k) for k in range(8)] for p in range(2)]
    other = [[member(p, k) for k in range(8)] for p in range(2)]
    for player, size, swap in calls:
        members = (other if swap else pools)[player][:size]
        expected = np.zeros((tree.players[player].num_infosets, tree.num_actions), bool)
        for m in members:
            if m.metadata["oracle"] == "exact":
                expected |= m.probs > 0
        for i, legal in enumerate(tree.players[player].legal):
            if not expected[i].any():
                expected[i, min(legal)] = True
        got = xdo.allowed(player, members)
        np.testing.assert_array_equal(got, expected)
        got[:] = False  # an answer is the caller's to change
        np.testing.assert_array_equal(xdo.allowed(player, members), expected)


def test_xdo_lp_gives_both_players_an_equilibrium_from_one_lp():
    """With every action allowed, player 0's LP solution and its dual are a Nash equilibrium
    of Leduc (OpenSpiel's NashConv) worth the game's value to player 0."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    from psro.algorithms.xdo import XDOAlgorithm

    run = psro.PSRO("leduc_poker")
    tree = run.tree
    allowed = [np.array([[a in legal for a in range(tree.num_actions)] for legal in
                         tree.players[p].legal]) for p in range(2)]
    policies = XDOAlgorithm(tree)._equilibrium(allowed)
    members = [[psro.extensive_form.policies.TabularPolicy(p, policies[p])] for p in range(2)]
    policy = psro.extensive_form.policies.MetaPolicy(tree, members, [np.ones(1), np.ones(1)])
    assert os_exploitability.nash_conv(tree.game, policy) < 1e-9
    plans = [tree.realization_plan(p, policies[p]) for p in range(2)]
    assert tree.expected_returns(plans)[0] == pytest.approx(-0.0856064, abs=1e-6)


@pytest.mark.parametrize("solver", ["cfr", "pcfr", "dcfr"])
def test_xdo_with_warm_cfr_converges_and_resumes_to_identical_numbers(solver, tmp_path):
    """Each CFR-family restricted-game solver (CFR+, PCFR+, DCFR): Leduc's exploitability
    below 1e-3 (OpenSpiel's own measure of the run's last meta-policy), and a run resumed at
    iteration 4 gives the uninterrupted run's numbers."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    full = psro.PSRO("leduc_poker", algorithm="xdo", xdo_solver=solver).run(iterations=18)
    assert full[-1]["exploitability"] < 1e-3
    assert full[-1]["restricted_actions"] > full[1]["restricted_actions"]
    psro.PSRO("leduc_poker", algorithm="xdo", xdo_solver=solver,
              out=tmp_path / "r").run(iterations=4)
    resumed = psro.PSRO.resume(tmp_path / "r").run(iterations=18)
    assert numbers(resumed) == numbers(full)
    run = psro.load_run(tmp_path / "r")
    assert run.config.xdo_solver == solver
    newest = run.population[1][-1].metadata
    assert newest["cfr_warm"] is True and newest["cfr_iterations"] > 0
    theirs = os_exploitability.exploitability(run.tree.game, run.meta_policy())
    assert theirs == pytest.approx(resumed[-1]["exploitability"], abs=1e-9)


@pytest.mark.parametrize("solver", ["cfr", "pcfr", "dcfr"])
def test_a_cfr_family_xdo_stops_at_its_floor_or_goes_on_to_a_tighter_target(solver, tmp_path):
    """Kuhn with a CFR-family restricted solver. Without a target the run stops once its newest
    equilibrium's NashConv is at the tolerance's floor (1e-4 of the largest return, 2: an
    exploitability of at most 1e-4), not before and not much after; the same run then asked
    for 1e-6, below that floor, goes on until it gets there (OpenSpiel's exploitability of
    its last meta-policy agrees)."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    run = psro.PSRO("kuhn_poker", algorithm="xdo", xdo_solver=solver, out=tmp_path / "r")
    rows = run.run(iterations=300)
    assert run.stop_reason == "restricted_game_complete"
    assert 1e-6 < rows[-1]["exploitability"] <= 1e-4
    assert all(r["exploitability"] > 1e-4 for r in rows[:-1])
    rows = run.run(iterations=300, target_exploitability=1e-6)
    assert run.stop_reason == "target_exploitability"
    assert rows[-1]["exploitability"] <= 1e-6 < rows[-2]["exploitability"]
    loaded = psro.load_run(tmp_path / "r")
    theirs = os_exploitability.exploitability(loaded.tree.game, loaded.meta_policy())
    assert theirs == pytest.approx(rows[-1]["exploitability"], abs=1e-12)


def test_a_cfr_family_xdo_resumed_with_a_tighter_target_gives_the_numbers_of_one_run(tmp_path):
    """A PCFR+ run that stopped at its floor, resumed from its directory with a target below
    it, ends with the rows of one run to that target (the tolerances follow the metrics and
    the target, the solver's state is replayed)."""
    whole = psro.PSRO("kuhn_poker", algorithm="xdo", xdo_solver="pcfr").run(
        target_exploitability=1e-7)
    psro.PSRO("kuhn_poker", algorithm="xdo", xdo_solver="pcfr", out=tmp_path / "r").run()
    resumed = psro.PSRO.resume(tmp_path / "r")
    rows = resumed.run(target_exploitability=1e-7)
    assert resumed.stop_reason == "target_exploitability" and len(rows) > 10
    assert numbers(rows) == numbers(whole)


def test_restricted_cfr_asked_again_on_the_same_game_continues_its_run():
    """A second call on the same restricted game continues the first: from scratch, its
    average is bit for bit that of one run of all the iterations (OpenSpiel's C++ CFR+ on
    three-player Kuhn, the full game, checks the policy's NashConv independently)."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    from psro.extensive_form.restricted_cfr import RestrictedCFR, solve_restricted

    tree = psro.PSRO("kuhn_poker(players=3)", algorithm="xdo").tree
    allowed = [np.array([[a in legal for a in range(tree.num_actions)] for legal in
                         tree.players[p].legal]) for p in range(3)]
    solver = RestrictedCFR(tree, warm=False)
    first = solver.solve(allowed, tolerance=0.05, max_iterations=25)
    again = solver.solve(allowed, tolerance=0.0, max_iterations=50)
    assert not first.continued and again.continued and again.iterations == 50
    whole = solve_restricted(tree, allowed, tolerance=0.0, max_iterations=75)
    assert all(np.array_equal(a, b) for a, b in zip(again.policies, whole.policies, strict=True))
    assert again.nash_conv == whole.nash_conv < first.nash_conv
    policies = psro.extensive_form.policies
    members = [[policies.TabularPolicy(p, again.policies[p])] for p in range(3)]
    policy = policies.MetaPolicy(tree, members, [np.ones(1)] * 3)
    assert os_exploitability.nash_conv(tree.game, policy) == pytest.approx(again.nash_conv,
                                                                           abs=1e-12)
    grown = [a.copy() for a in allowed]
    grown[0][0, :] = False
    grown[0][0, tree.players[0].legal[0][0]] = True
    assert not solver.solve(grown, tolerance=1.0).continued  # another game starts afresh


def test_xdo_from_scratch_cfr_resumes_to_identical_numbers(tmp_path):
    """Three-player Kuhn: once the restricted game is the whole game, each call continues the
    previous one; a run resumed there rebuilds that state and gives the same numbers."""
    game = "kuhn_poker(players=3)"
    full = psro.PSRO(game, algorithm="xdo")
    psro.PSRO(game, algorithm="xdo", out=tmp_path / "r").run(iterations=5)
    continued = [m.metadata["cfr_continued"] for m in psro.load_run(tmp_path / "r").population[0]
                 if m.metadata.get("oracle") == "xdo_restricted_nash"]
    assert continued[0] is False and continued[-1] is True
    resumed = psro.PSRO.resume(tmp_path / "r")
    assert numbers(resumed.run(iterations=7)) == numbers(full.run(iterations=7))
    solves = [[(m.metadata["cfr_iterations"], m.metadata["cfr_continued"]) for m in
               run.population[0] if m.metadata.get("oracle") == "xdo_restricted_nash"]
              for run in (resumed, full)]
    assert solves[0] == solves[1] and solves[0][-2:] == [(25, True), (50, True)]
    assert full.metrics[-1]["exploitability"] < 1e-3


def test_xdo_solver_refusals():
    with pytest.raises(ConfigError, match="xdo_solver 'lp' needs a two-player zero-sum game"):
        psro.PSRO("kuhn_poker(players=3)", algorithm="xdo", xdo_solver="lp")
    with pytest.raises(ConfigError, match="xdo_solver has no effect in this run: it is a "
                                          "setting of algorithm 'xdo'"):
        psro.PSRO("kuhn_poker", xdo_solver="cfr")
    with pytest.raises(ConfigError,
                       match="xdo_solver must be one of lp, cfr, pcfr, dcfr; got 'simplex'"):
        psro.PSRO("kuhn_poker", algorithm="xdo", xdo_solver="simplex")

    with pytest.raises(ConfigError, match="xdo_expansion 'improving' needs xdo_solver 'lp'"):
        psro.PSRO("kuhn_poker", algorithm="xdo", xdo_solver="cfr", xdo_expansion="improving")
    with pytest.raises(ConfigError, match="xdo_expansion has no effect in this run: it is a "
                                          "setting of algorithm 'xdo'"):
        psro.PSRO("kuhn_poker", xdo_expansion="improving")
    with pytest.raises(ConfigError, match="xdo_expansion must be one of responses, improving; "
                                          "got 'all'"):
        psro.PSRO("kuhn_poker", algorithm="xdo", xdo_expansion="all")


def test_xdo_growing_by_improving_actions_ends_at_an_equilibrium_and_resumes_identically(
        tmp_path):
    """With ``xdo_expansion="improving"`` Leduc ends at an exact equilibrium (OpenSpiel's own
    NashConv of the meta-policy 0, player 0's value the game's -0.0856064) with fewer actions
    than growing by every action of the best responses, and a run resumed at iteration 5 gives
    the uninterrupted run's numbers."""
    from open_spiel.python.algorithms import exploitability as os_exploitability

    full = psro.PSRO("leduc_poker", algorithm="xdo", xdo_expansion="improving")
    rows = full.run(iterations=60)
    assert full.stop_reason == "restricted_game_complete" and rows[-1]["iteration"] < 60
    assert rows[-1]["value_p0"] == pytest.approx(-0.0856064, abs=1e-6)
    responses = psro.PSRO("leduc_poker", algorithm="xdo").run(iterations=60)
    assert rows[-1]["restricted_actions"] < responses[-1]["restricted_actions"]
    psro.PSRO("leduc_poker", algorithm="xdo", xdo_expansion="improving",
              out=tmp_path / "r").run(iterations=5)
    resumed = psro.PSRO.resume(tmp_path / "r").run(iterations=60)
    assert numbers(resumed) == numbers(rows)
    run = psro.load_run(tmp_path / "r")
    assert (run.config.xdo_solver, run.config.xdo_expansion) == ("lp", "improving")
    assert os_exploitability.nash_conv(run.tree.game, run.meta_policy()) < 1e-9


@pytest.mark.parametrize("game_name", ["kuhn_poker", "leduc_poker"])
def test_improving_actions_are_the_largest_counterfactual_regrets_openspiel_finds(game_name):
    """Against the uniform profile, the improving actions of each information set are those of
    largest positive regret in OpenSpiel's own CFR after one simultaneous iteration from
    uniform play (its cumulative regrets are then the counterfactual regrets of that
    profile)."""
    import pyspiel
    from open_spiel.python.algorithms import cfr

    from psro.extensive_form.improving import improving_actions, prepared_players
    from psro.extensive_form.sequence_form import SequenceFormGame

    game = pyspiel.load_game(game_name)
    tree = SequenceFormGame(game, name=game_name)
    solver = cfr._CFRSolver(game, regret_matching_plus=False, alternating_updates=False,
                            linear_averaging=False)
    solver.evaluate_and_update_policy()
    uniform = [tree.uniform_policy(p) for p in range(2)]
    found = improving_actions(tree, prepared_players(tree), uniform, 1e-9)
    improving = 0
    for p in range(2):
        for i, key in enumerate(tree.players[p].keys):
            regrets = solver._info_state_nodes[key].cumulative_regret
            best = max(regrets.values())
            expected = {a for a, r in regrets.items() if best > 1e-9 and r >= best - 1e-12}
            assert set(np.flatnonzero(found[p][i])) == expected, (p, key)
            improving += bool(expected)
    assert improving > 0


@pytest.mark.parametrize("seed", range(4))
def test_best_off_path_leaves_no_allowed_action_improving(seed):
    """On Leduc restricted at random (each legal action kept with probability 0.6): against
    the restricted LP's equilibrium as the LP returns it, allowed actions have positive
    counterfactual regrets (at information sets its own players never reach, where it is
    uniform); with :func:`best_off_path` none has (the same actions when ``improving_actions``
    completes the policies itself), while its realization plans (and so every
    return and its exploitability) are unchanged."""
    import pyspiel

    from psro.extensive_form.improving import best_off_path, improving_actions, prepared_players
    from psro.extensive_form.sequence_form import SequenceFormGame
    from psro.extensive_form.sequence_lp import SequenceFormLP

    tree = SequenceFormGame(pyspiel.load_game("leduc_poker"))
    rng = np.random.default_rng(seed)
    allowed = []
    for p in range(2):
        mask = (tree.uniform_policy(p) > 0) & (rng.random((tree.players[p].num_infosets,
                                                           tree.num_actions)) < 0.6)
        for i in np.flatnonzero(~mask.any(axis=1)):
            mask[i, tree.players[p].legal[i][0]] = True
        allowed.append(mask)
    policies, _ = SequenceFormLP(tree).solve(allowed)
    completed = best_off_path(tree, policies, allowed)
    prepared = prepared_players(tree)
    before = improving_actions(tree, prepared, policies, 1e-9)
    after = improving_actions(tree, prepared, completed, 1e-9)
    at_once = improving_actions(tree, prepared, policies, 1e-9, allowed=allowed)
    assert all(np.array_equal(a, b) for a, b in zip(after, at_once, strict=True))
    assert any((b & a).any() for b, a in zip(before, allowed, strict=True))
    assert not any((b & a).any() for b, a in zip(after, allowed, strict=True))
    assert any(b.any() for b in after)  # the restricted equilibrium is exploitable
    for p in range(2):
        np.testing.assert_allclose(tree.realization_plan(p, completed[p]),
                                   tree.realization_plan(p, policies[p]), atol=1e-12)


def test_an_xdo_run_saved_before_expansions_resumes_growing_by_responses(tmp_path):
    """A run directory whose config.json has no ``xdo_expansion`` (written before the setting
    existed) resumes as it ran, growing by responses, on a game whose default is now
    ``"improving"``."""
    import json

    out = tmp_path / "old"
    psro.PSRO("liars_dice", algorithm="xdo", xdo_expansion="responses",
              out=out).run(iterations=1)
    as_written_before_config_digests(out)  # so that config.json may be edited
    config = json.loads((out / "config.json").read_text())
    del config["xdo_expansion"]
    (out / "config.json").write_text(json.dumps(config))
    resumed = psro.PSRO.resume(out)
    assert resumed.config.xdo_expansion == "responses"
    assert resumed.parts.algorithm.improving is None



PIPELINE = {"game": "kuhn_poker", "oracle": "ppo", "algorithm": "pipeline", "seed": 2,
            "ppo": {"env_steps": 800, "num_envs": 16}}


def test_pipeline_learners_train_in_chunks_freeze_and_restart_on_top():
    from psro.algorithms.pipeline import PipelineAlgorithm

    width = 2  # a learner's budget: two chunks of ppo.env_steps / 2
    run = psro.PSRO(**PIPELINE, pipeline_width=width)
    rows = run.run(iterations=width + 1)
    for p, pop in enumerate(run.population):
        learners = [m.metadata.get("learner") for m in pop]
        # two snapshots per iteration (one per active learner) after the initial member
        assert len(pop) == 1 + 2 * (width + 1)
        assert learners[1:2 * width + 1:2] == [1] * width
        # each snapshot is one chunk: half the budget (rounded up to whole batches of steps)
        assert all(400 <= m.metadata["env_steps"] < 800 for m in pop[1:])
        frozen = [i for i, m in enumerate(pop) if m.metadata.get("frozen")]
        assert frozen[0] == 2 * width - 1  # learner 1's last chunk
        assert PipelineAlgorithm.frozen(pop)[:2] == [0, frozen[0]]
        # retired snapshots have no weight in the meta-strategy
        live = set(PipelineAlgorithm.frozen(pop)) | {k for _, k in
                                                     PipelineAlgorithm.active(pop)}
        assert all(w == 0 for k, w in enumerate(run.mixtures[p]) if k not in live)
    targets = run.parts.algorithm.targets(run.state)
    by_player = [[t for t in targets if t.player == p] for p in range(2)]
    for p, (low, high) in enumerate(by_player):
        assert low.tag < high.tag  # levels: lowest learner first
        q = 1 - p
        frozen_q = set(PipelineAlgorithm.frozen(run.population[q]))
        assert set(np.flatnonzero(low.mixtures[q])) <= frozen_q  # lowest: frozen only
        current = dict(PipelineAlgorithm.active(run.population[p]))
        assert low.start is run.population[p][current[low.tag]]  # continues itself
        # learner 2 froze after learner 1: a new learner on top, warm-started from below
        assert high.tag not in current and high.start is low.start
    assert rows[-1]["exploitability"] < rows[0]["exploitability"]


def test_pipeline_resumes_every_learner_where_it_was(tmp_path):
    full = psro.PSRO(**PIPELINE).run(iterations=4)
    psro.PSRO(**PIPELINE, out=tmp_path / "a").run(iterations=2)
    resumed = psro.PSRO.resume(tmp_path / "a").run(iterations=4)
    assert numbers(resumed) == numbers(full)
    run = psro.load_run(tmp_path / "a")
    assert [m.metadata.get("learner") for m in run.population[0]] == \
        [None, 1, 2, 1, 2, 2, 3, 3, 4]


def test_a_registered_trained_oracle_drives_every_variant_its_capabilities_allow():
    """Refusals come from what parts declare, never from their names: an oracle registered
    from outside with the PPO oracle's capabilities runs pipeline and anytime by regret
    matching; one that declares none is refused by both, naming what is missing."""
    from psro.oracles.ppo import PPOOracle

    capable = "ppo_like_" + str(id(object()))
    psro.oracles.register(capable, PPOOracle.build, turn_based=True, settings=("ppo", "seed"),
                          capabilities=("trains", "targets", "round_hook", "correlated"))
    rows = psro.PSRO("kuhn_poker", capable, algorithm="pipeline", seed=1,
                     ppo={"env_steps": 1200}).run(iterations=2)
    assert len(rows) == 3 and rows[-1]["env_steps"] > 0
    rows = psro.PSRO("kuhn_poker", capable, algorithm="anytime", anytime_rounds=2, seed=1,
                     ppo={"env_steps": 1200}).run(iterations=1)
    assert rows[-1]["restricted_value_p0"] is not None
    plain = "plain_" + str(id(object()))
    psro.oracles.register(plain, PPOOracle.build, turn_based=True, settings=("ppo", "seed"))
    for algorithm, missing in (("pipeline", "trains its best responses"),
                               ("rectified", "trains several best responses per player")):
        with pytest.raises(psro.ConfigError, match=f"needs an oracle that {missing}"):
            psro.PSRO("kuhn_poker", plain, algorithm=algorithm, ppo={"env_steps": 1200})
    with pytest.raises(psro.ConfigError, match="unknown oracle capability 'fast'"):
        psro.oracles.register("x" + plain, PPOOracle.build, capabilities=("fast",))


def test_xdo_default_solver_is_the_fastest_measured_and_recorded():
    """Without ``xdo_solver`` and ``xdo_expansion`` a two-player zero-sum run gets CFR+ for a
    target exploitability of at least 2e-6 of the largest return, growing by responses (Kuhn,
    Leduc; liar's dice and goofspiel 5 growing by responses by name, or with a trained
    oracle), or of at least 1e-3 of it where the LP would grow by improving actions (the exact
    oracle on a game of 1,000 information sets of a player or more: goofspiel 5, liar's
    dice); else the LP, growing by improving actions on those games; CFR+ on a game whose LPs
    are slow (Leduc with 13 ranks) unless growing by improving actions by name; CFR+ with more
    players. The run's config names the solver and the expansion that ran."""
    import pyspiel

    from psro.algorithms.xdo import XDOAlgorithm
    from psro.extensive_form.sequence_form import SequenceFormGame

    def chosen(game, **settings):  # a run: its config records what ran
        config = psro.PSRO(game, algorithm="xdo", **settings).config
        return config.xdo_solver, config.xdo_expansion

    trees = {}

    def rule(game, **settings):  # the same choice, each game walked once for the test
        if game not in trees:  # (setdefault would walk the game on every call)
            trees[game] = SequenceFormGame(pyspiel.load_game(game))
        xdo = XDOAlgorithm(trees[game], **settings)
        return xdo.solver, xdo.expansion

    goofspiel_5 = "goofspiel(num_cards=5,imp_info=True,points_order=descending)"
    assert chosen("leduc_poker", target_exploitability=1e-3) == ("cfr", "responses")
    assert chosen("liars_dice", target_exploitability=1e-3) == ("cfr", "responses")
    assert chosen("liars_dice", target_exploitability=5e-4) == ("lp", "improving")
    assert chosen("liars_dice", oracle="ppo", target_exploitability=1e-4) == \
        ("cfr", "responses")
    assert chosen("kuhn_poker(players=3)") == ("cfr", "responses")
    assert rule("kuhn_poker", target_exploitability=1e-3) == ("cfr", "responses")
    assert rule("kuhn_poker") == ("lp", "responses")
    assert rule("leduc_poker") == ("lp", "responses")
    assert rule("leduc_poker", target_exploitability=5e-5) == ("cfr", "responses")
    assert rule("leduc_poker", target_exploitability=1e-5) == ("lp", "responses")  # < 13 * 2e-6
    assert rule(goofspiel_5, target_exploitability=1e-4, expansion="responses") == \
        ("cfr", "responses")
    assert rule(goofspiel_5) == ("lp", "improving")
    assert rule(goofspiel_5, target_exploitability=1e-4) == ("lp", "improving")
    assert rule("liars_dice", target_exploitability=1e-5, expansion="responses") == \
        ("cfr", "responses")
    assert rule("liars_dice", target_exploitability=1e-6, expansion="responses") == \
        ("lp", "responses")
    assert rule("liars_dice", exact_oracle=False, solver="lp") == ("lp", "responses")
    assert rule("liars_dice", exact_oracle=False, expansion="improving",
                target_exploitability=1e-3) == ("lp", "improving")
    leduc_13 = SequenceFormGame(pyspiel.load_game(
        "universal_poker(betting=limit,numPlayers=2,numRounds=2,blind=1 1,raiseSize=2 4,"
        "firstPlayer=1 1,maxRaises=2 2,numSuits=2,numRanks=13,numHoleCards=1,"
        "numBoardCards=0 1)"))  # 30.7 nonzero payoffs a row of player 0's: its LPs are slow

    def on_leduc_13(**settings):
        xdo = XDOAlgorithm(leduc_13, **settings)
        return xdo.solver, xdo.expansion

    assert on_leduc_13() == ("cfr", "responses")
    assert on_leduc_13(target_exploitability=1e-3) == ("cfr", "responses")
    assert on_leduc_13(target_exploitability=1e-6) == ("cfr", "responses")
    assert on_leduc_13(expansion="improving") == ("lp", "improving")
