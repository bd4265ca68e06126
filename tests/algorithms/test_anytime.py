"""Anytime PSRO by regret matching against trained best responses (psro/anytime.py): the
regret-matching bound against exact best responses on matrix games (maximin by an LP written
here), the PPO version against the exact least-exploitable-mixture LP, the same mixtures on a
game too large to walk, resume, and refusals."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import psro
from psro.algorithms.anytime import AnytimeAlgorithm
from psro.algorithms.anytime_rm import RegretMatching
from psro.cli import main
from psro.evaluation.exploitability import exact_exploitability


def maximin(a: np.ndarray) -> float:
    """The row player's maximin value of the zero-sum matrix ``a`` (LP: max v, x @ a >= v)."""
    m, n = a.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    a_ub = np.hstack([-a.T, np.ones((n, 1))])
    result = linprog(cost, A_ub=a_ub, b_ub=np.zeros(n), A_eq=[[1.0] * m + [0.0]], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)], method="highs")
    return -result.fun


def against_best_responses(a: np.ndarray, rounds: int) -> np.ndarray:
    """Regret matching of the row player of ``a``; the column player best responds exactly."""
    matching = RegretMatching(np.full(a.shape[0], 1.0 / a.shape[0]))
    for _ in range(rounds):
        column = int(np.argmin(matching.sigma @ a))
        matching.observe(a[:, column])
    return matching.average


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 8), seed=st.integers(0, 10**6),
       rounds=st.sampled_from([50, 400]))
def test_regret_matching_is_within_its_regret_bound_of_the_maximin(rows, cols, seed, rounds):
    a = np.random.default_rng(seed).uniform(-1, 1, size=(rows, cols))
    average = against_best_responses(a, rounds)
    worst_case = float(np.min(average @ a))
    spread = a.max() - a.min()
    assert maximin(a) - worst_case <= spread * np.sqrt(rows / rounds) + 1e-9


def test_regret_matching_finds_the_unique_maximin_mixture():
    rps = np.array([[0, -1, 2], [1, 0, -1], [-2, 1, 0]], dtype=float)  # maximin (1/4, 1/2, 1/4)
    average = against_best_responses(rps, 4000)
    np.testing.assert_allclose(average, [0.25, 0.5, 0.25], atol=0.01)


RM = {"algorithm": "anytime", "anytime_rounds": 4, "seed": 1, "ppo": {"env_steps": 4000},
      "monte_carlo": {"max_episodes": 512}}


def _least_exploitable(run, iteration: int) -> float:
    """Exploitability of the exact least exploitable mixtures (the LP of the exact anytime) of
    the members that iteration's regret matching mixed (all but the newest)."""
    lp = AnytimeAlgorithm(run.tree, None)
    members = [pop[:iteration + 1] for pop in run.population]
    mixtures = [np.append(lp._least_exploitable(p, pop[:iteration]), 0.0)
                for p, pop in enumerate(members)]
    return exact_exploitability(run.tree, lp.stack.mixed(members, mixtures)).exploitability


@pytest.mark.slow
def test_anytime_with_ppo_comes_near_the_least_exploitable_mixture(tmp_path):
    run = psro.PSRO("kuhn_poker", "ppo", "nash", **RM, out=tmp_path / "a")
    rows = run.run(iterations=4)
    for it in range(2, 5):  # the margin: PPO's shortfall and sampling noise at 1,000 steps
        assert rows[it]["exploitability"] <= _least_exploitable(run, it) + 0.1  # a round
    assert rows[-1]["exploitability"] < 0.25 < rows[0]["exploitability"]
    for p in range(2):  # the meta-strategy is the opponent's newest restricted mixture
        restricted = run.population[1 - p][-1].metadata["restricted"]
        np.testing.assert_array_equal(run.mixtures[p], restricted + [0.0])
        assert rows[-1][f"restricted_value_p{p}"] == \
            run.population[1 - p][-1].metadata["restricted_value"]
    psro.PSRO("kuhn_poker", "ppo", "nash", **RM, out=tmp_path / "b").run(iterations=2)
    resumed = psro.PSRO.resume(tmp_path / "b").run(iterations=4)
    assert [r["exploitability"] for r in resumed] == [r["exploitability"] for r in rows]


def test_anytime_on_a_game_too_large_to_walk_mixes_as_the_walked_run():
    """With sampled payoffs (Kuhn declared too large) the restricted mixtures are the ones the
    walked run finds (same seeds, same plays), and the run ends with a sampled lower bound."""
    walked = psro.PSRO("kuhn_poker", "ppo", "nash", **RM)
    walked.run(iterations=2)
    sampled = psro.PSRO("kuhn_poker", "ppo", "nash", max_nodes=10,
                        lower_bound={"env_steps": 4000}, **RM)
    rows = sampled.run(iterations=2)
    assert sampled.evaluator.name == "sampled"
    for p in range(2):
        assert [m.metadata.get("restricted") for m in sampled.population[p]] == \
            [m.metadata.get("restricted") for m in walked.population[p]]
        np.testing.assert_array_equal(sampled.mixtures[p], walked.mixtures[p])
    assert rows[-1]["exploitability_kind"] == "approximate_lower_bound"
    assert rows[-1]["restricted_value_p0"] is not None


def test_anytime_without_a_walked_tree_defaults_to_ten_rounds():
    run = psro.PSRO("kuhn_poker", "ppo", "nash", algorithm="anytime", max_nodes=10)
    assert run.parts.algorithm.rounds == 10
    exact = psro.PSRO("kuhn_poker", "ppo", "nash", algorithm="anytime")
    assert type(exact.parts.algorithm) is AnytimeAlgorithm


def test_anytime_episodes_sets_each_rounds_estimate_and_keeps_the_mixture_near_the_lp():
    """``anytime_episodes``: every member's return in every round from exactly that many
    episodes (counted per response), and the mixture still near the exact LP's."""
    few = {**RM, "anytime_episodes": 128}
    run = psro.PSRO("kuhn_poker", "ppo", "nash", **few)
    rows = run.run(iterations=3)
    for p in range(2):
        for member in run.population[p][1:]:  # trained at iteration i against i members
            i = member.metadata["iteration"]
            assert member.metadata["round_episodes"] == RM["anytime_rounds"] * i * 128
        assert rows[-1][f"round_episodes_p{1 - p}"] == \
            run.population[p][-1].metadata["round_episodes"]
    for it in range(2, 4):
        assert rows[it]["exploitability"] <= _least_exploitable(run, it) + 0.1
    default = psro.PSRO("kuhn_poker", "ppo", "nash", **RM).run(iterations=1)
    # without it, each estimate runs to its tolerance (0.02, not reached): max_episodes
    assert default[-1]["round_episodes_p0"] == \
        RM["anytime_rounds"] * RM["monte_carlo"]["max_episodes"]


@pytest.mark.parametrize("argv,match", [
    (["--anytime-episodes", "64"], "algorithm 'anytime' needs an oracle that trains its best "
                                   "responses in environment steps"),
    (["--anytime-episodes", "64"], "regret matching against trained best responses where "
                                   "anytime_episodes is set"),
    (["--oracle", "ppo", "--anytime-episodes", "0"],
     "anytime_episodes must be a positive integer; got 0"),
    (["--anytime-rounds", "3"], "algorithm 'anytime' needs an oracle that trains its best "
                                "responses in environment steps (warm starts, budgets, "
                                "plateaus) and trains in rounds with a hook between them (it "
                                "finds the least exploitable mixture by regret matching "
                                "against trained best responses where anytime_rounds is set"),
    (["--oracle", "ppo", "--anytime-rounds", "0"],
     "anytime_rounds must be a positive integer; got 0"),
])
def test_anytime_rounds_refusals(argv, match, tmp_path, capsys):
    assert main(["run", "--game", "kuhn_poker", "--algorithm", "anytime", *argv,
                 "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0], err
    assert not (tmp_path / "x").exists()
