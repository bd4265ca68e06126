"""Diverse PSRO: each new member maximises the objective written out here (payoff against the
meta-strategy plus the DPP expected cardinality, by its subset-sum definition), the PPO oracle
climbs the same objective, the metrics carry each population's diversity, and what cannot
weigh the term is refused."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import psro
from psro.errors import ConfigError


def cardinality(rows: np.ndarray) -> float:
    """E|Y| = sum over subsets of |Y| det(L_Y) / det(L + I), L = rows rows^T."""
    kernel = rows @ rows.T
    k = len(rows)
    total = sum(len(s) * np.linalg.det(kernel[np.ix_(s, s)])
                for size in range(1, k + 1) for s in itertools.combinations(range(k), size))
    return total / np.linalg.det(kernel + np.eye(k))


def objective(rows, row, mixture, weight, scale):
    return mixture @ row / scale + weight * cardinality(np.vstack([rows, row]) / scale)


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.3, 1.0, 3.0]))
def test_each_exact_member_maximises_the_diverse_objective(seed, weight):
    run = psro.PSRO(f"random_zero_sum(n=5,seed={seed})", "exact", "nash", algorithm="diverse",
                    diversity=weight)
    A = run.parts.context.game.payoffs[0]
    scale = np.abs(A).max()
    run.initialize()
    for _ in range(4):
        table = run.table.as_game()[0].copy()
        mixture = run.mixtures[1]
        opponents = np.stack([m.probs[0] for m in run.population[1]])
        run.step()
        chosen = int(np.argmax(run.population[0][-1].probs[0]))
        scores = [objective(table, A[a] @ opponents.T, mixture, weight, scale)
                  for a in range(A.shape[0])]
        assert scores[chosen] == pytest.approx(max(scores), abs=1e-9)


@pytest.mark.parametrize("n,m", [(3, 5), (5, 2), (1, 4)])
def test_exact_members_maximise_the_objective_in_games_of_unequal_sides(n, m):
    """Members' tables have a column per action of the game (the larger side): the smaller
    side's strategies are read from the first columns (this failed with a shape error)."""
    run = psro.PSRO(f"random_general_sum(n={n},m={m},seed=4)", "exact", "nash",
                    algorithm="diverse")
    A, B = run.parts.context.game.payoffs
    scale = max(np.abs(A).max(), np.abs(B).max())
    run.initialize()
    for _ in range(3):
        rows, mixture = run.table.as_game()[1].T.copy(), run.mixtures[0]
        opponents = np.stack([member.probs[0, :n] for member in run.population[0]])
        run.step()
        chosen = int(np.argmax(run.population[1][-1].probs[0]))
        scores = [objective(rows, B[:, b] @ opponents.T, mixture, 1.0, scale)
                  for b in range(m)]
        assert scores[chosen] == pytest.approx(max(scores), abs=1e-9)


def test_openspiel_normal_form_games_carry_their_payoffs_for_the_exact_oracle():
    """OpenSpiel's own matrix games (not only the catalogue's) are normal-form: their payoff
    arrays are loaded, so ``diverse`` runs there with the exact oracle (it was refused as an
    extensive-form game). Shapley's game, written out here."""
    import games

    shapley = [np.array([[0, 0, 1], [1, 0, 0], [0, 1, 0]]),
               np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0]])]
    loaded = games.load("matrix_shapleys_game").payoffs
    assert [a.tolist() for a in loaded] == [a.tolist() for a in shapley]
    assert games.load("kuhn_poker").payoffs is None
    rows = psro.PSRO("matrix_shapleys_game", "exact", "nash", algorithm="diverse").run(
        iterations=3)
    assert rows[-1]["diversity_p0"] > 1.0


def test_the_diversity_term_changes_the_choice_and_raises_diversity():
    plain = psro.PSRO("random_zero_sum(n=6,seed=0)", "exact", "nash")
    diverse = psro.PSRO("random_zero_sum(n=6,seed=0)", "exact", "nash", algorithm="diverse",
                        diversity=3.0)
    plain_rows, diverse_rows = plain.run(iterations=2), diverse.run(iterations=2)
    assert int(np.argmax(plain.population[0][2].probs[0])) == 5  # the plain best response
    assert int(np.argmax(diverse.population[0][2].probs[0])) == 2
    assert diverse_rows[-1]["diversity_p0"] > plain_rows[-1]["diversity_p0"]


def test_metrics_rows_carry_each_populations_diversity():
    run = psro.PSRO("kuhn_poker", "exact", "nash")
    rows = run.run(iterations=4)
    table = run.table.as_game()
    assert rows[-1]["diversity_p0"] == pytest.approx(cardinality(table[0] / 2.0), rel=1e-9)
    assert rows[-1]["diversity_p1"] == pytest.approx(cardinality(table[1].T / 2.0), rel=1e-9)


@pytest.mark.slow
def test_ppo_climbs_the_same_objective():
    """With the PPO oracle the new member scores higher on the diverse objective (computed
    exactly from the game's payoffs) than the plain PPO best response of the same run."""
    game = "random_zero_sum(n=6,seed=0)"
    runs = {}
    for algorithm, extra in (("psro", {}), ("diverse", {"diversity": 3.0})):
        run = psro.PSRO(game, "ppo", "nash", algorithm=algorithm, seed=0,
                        ppo={"env_steps": 30_000}, **extra)
        run.run(iterations=1)
        runs[algorithm] = run
    base = runs["diverse"]
    A = base.parts.context.game.payoffs[0]
    table, mixture = base.table.as_game()[0], base.mixtures[1]
    opponents = np.stack([m.probs[0] for m in base.population[1]])
    scale = np.abs(A).max()
    scored = {}
    for name, run in runs.items():
        run.step()
        row = run.population[0][-1].probs[0] @ A @ opponents.T
        scored[name] = objective(table, row, mixture, 3.0, scale)
    assert np.array_equal(runs["psro"].table.as_game()[0][:2, :2], table[:2, :2])
    assert scored["diverse"] > scored["psro"]
    log = [r for r in runs["diverse"].oracle_log if r["iteration"] == 2 and r["player"] == 0]
    assert log[-1]["diversity_objective"] > log[0]["diversity_objective"]


def test_on_sampled_payoffs_the_objective_reads_estimated_rows_whatever_the_meta_solver():
    """Where the tree is not walked, entries that no part reads are left unestimated; a
    meta-solver such as ``uniform`` reads none, but Diverse PSRO's objective reads every payoff
    row, so they are estimated (they were NaN, and the best response failed). The estimate of
    uniform against uniform is checked against OpenSpiel's exact value."""
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import expected_game_score

    small = {"num_envs": 16, "steps_per_update": 512, "hidden": (16,)}
    run = psro.PSRO("kuhn_poker", "ppo", "uniform", algorithm="diverse", seed=0, max_nodes=10,
                    ppo={"env_steps": 2048, **small}, lower_bound={"final": False})
    rows = run.run(iterations=1)
    game = run.parts.context.play_game
    uniform = policy_lib.UniformRandomPolicy(game)
    exact = expected_game_score.policy_value(game.new_initial_state(), [uniform, uniform])
    assert run.table.counts.min() > 0
    assert np.all(np.isfinite(run.table.values))
    assert abs(run.table.values[0][0, 0] - exact[0]) <= 4 * run.table.std_errs[0][0, 0]
    assert rows[-1]["diversity_p0"] is not None


@pytest.mark.parametrize("settings_, text", [
    ({"game": "kuhn_poker", "algorithm": "diverse"}, "cannot weigh the population's payoff"),
    ({"game": "rps", "diversity": 2.0}, "diversity has no effect in this run"),
    ({"game": "rps", "algorithm": "diverse", "diversity": 0.0},
     r"diversity must be a number in \(0, 1000\]"),
    ({"game": "kuhn_poker(players=3)", "algorithm": "diverse", "oracle": "ppo",
      "meta_solver": "prd"}, "needs a game of 2 players"),
])
def test_refusals(settings_, text):
    with pytest.raises(ConfigError, match=text):
        psro.PSRO(**{"oracle": "exact", **settings_})
