"""Cheaper sampled payoff tables: continued estimates, the refinement rule, the per-iteration
cap, and runs that use them (games too large to walk, forced here with max_nodes)."""

import numpy as np
import pytest
from conftest import TIMING, as_written_before_config_digests, random_kuhn_profile
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import psro
from psro.evaluation import monte_carlo
from psro.evaluation.refinement import entries_to_refine
from psro.extensive_form.policies import TabularPolicy, tabularise
from psro.payoffs import PayoffTable


def test_a_continued_estimate_pools_its_episodes_with_the_earlier_ones(kuhn):
    game, tree = kuhn
    actors = [m.actor(tree) for m in random_kuhn_profile(tree, 2)]
    seats, weights = [[a] for a in actors], [np.ones(1), np.ones(1)]
    first = monte_carlo.estimate_profile(game, actors, 11, min_episodes=300, max_episodes=300)
    more = monte_carlo.estimate_profile(game, actors, 99, tolerance=1e-9, min_episodes=256,
                                        max_episodes=812, batch=256, start=first)
    assert more.count == 812
    # the same episodes, summed here: 300 from seed 11, then rounds of 256 from seed 99
    sums = [monte_carlo.simulate(game, seats, weights, n, s)
            for n, s in ((300, 11), (256, 99), (256, 99 + 7919))]
    total, total_sq = sum(s[0] for s in sums), sum(s[1] for s in sums)
    mean = total / 812
    std_err = np.sqrt((total_sq / 812 - mean ** 2) * 812 / 811 / 812)
    np.testing.assert_allclose(more.mean, mean, atol=1e-12)
    np.testing.assert_allclose(more.std_err, std_err, rtol=1e-9)


def test_continued_estimates_cover_the_exact_value_at_the_stated_rate(kuhn):
    game, tree = kuhn
    profile = random_kuhn_profile(tree, 0)
    exact = tree.expected_returns([m.realization_plan(tree) for m in profile])[0]
    actors = [m.actor(tree) for m in profile]
    covered, trials = 0, 40
    for seed in range(trials):
        coarse = monte_carlo.estimate_profile(game, actors, seed, min_episodes=100,
                                              max_episodes=100)
        est = monte_carlo.estimate_profile(game, actors, 10_000 + seed, tolerance=1e-9,
                                           max_episodes=400, start=coarse)
        assert est.count == 400
        covered += abs(est.mean[0] - exact) <= est.half_width[0]
    # Nominal 95%: 38 of 40 expected; 34 or fewer happens with probability below 1%.
    assert covered >= 35


def _maximin(a: np.ndarray) -> np.ndarray:
    """The row player's maximin mixture of the zero-sum matrix ``a``, by an LP written here."""
    m, n = a.shape
    cost = np.zeros(m + 1)
    cost[-1] = -1.0
    result = linprog(cost, A_ub=np.hstack([-a.T, np.ones((n, 1))]), b_ub=np.zeros(n),
                     A_eq=np.concatenate([np.ones(m), [0.0]])[None, :], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)], method="highs")
    x = np.maximum(result.x[:m], 0.0)
    return x / x.sum()


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(2, 7), cols=st.integers(2, 7))
def test_refining_only_the_entries_the_meta_nash_depends_on_gives_an_exact_nash(seed, rows,
                                                                               cols):
    """Entries start coarse; each round the meta-Nash of the table is solved and the entries
    to refine get their exact values. When no entry is left to refine, the meta-Nash is an
    equilibrium of the exact game, though the entries outside what it depends on are still
    coarse, provided every member's return against a mixture is within its 95% interval:
    here each entry's error is at most ``Z95 * std_err / sqrt(max(rows, cols))``, so that by
    Cauchy-Schwarz ``|sum_j y_j error_j| <= Z95 * sqrt(sum_j y_j^2 std_err_j^2)``."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(-1, 1, (rows, cols))
    std_errs = rng.uniform(0.011, 0.3, (rows, cols))  # all coarse: 1.96 * 0.011 > 0.02
    bound = monte_carlo.Z95 * std_errs / np.sqrt(max(rows, cols))
    noisy = true + rng.uniform(-1, 1, (rows, cols)) * bound
    table = PayoffTable.from_arrays(np.stack([noisy, -noisy]), np.full((rows, cols), 256),
                                    np.stack([std_errs, std_errs]), exact=False)
    for _ in range(rows * cols + 1):
        mixtures = [_maximin(table.values[0]), _maximin(-table.values[0].T)]
        todo = entries_to_refine(table, mixtures, tolerance=0.02, max_episodes=8192)
        if not todo:
            break
        for i, j in todo:
            table.set_entry((i, j), np.array([true[i, j], -true[i, j]]), np.zeros(2), 8192, 1)
    assert not todo
    x, y = mixtures
    nash_conv = float((true @ y).max() - (x @ true).min())
    assert nash_conv <= 1e-7
    assert len(table.refined) <= rows * cols


def test_entries_no_deviation_can_reach_stay_coarse():
    # rock-paper-scissors among members 0-2; member 3 of each player loses to everything
    rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)
    values = np.full((4, 4), 0.0)
    values[:3, :3] = rps
    values[3, :3], values[:3, 3] = -0.9, 0.9
    table = PayoffTable.from_arrays(np.stack([values, -values]), np.full((4, 4), 256),
                                    np.full((2, 4, 4), 0.05), exact=False)
    third = np.array([1, 1, 1, 0]) / 3
    todo = set(entries_to_refine(table, [third, third], 0.02, 8192))
    # member 3's return against the support, -0.9 +- 0.06, cannot reach the value 0
    assert todo == {(i, j) for i in range(3) for j in range(3)}
    # with standard errors of 1 it could (-0.9 + 1.96 * sqrt(3) / 3 > 0): its entries against
    # the support are refined, and those against member 3 still are not
    table.std_errs[:] = 1.0
    todo = set(entries_to_refine(table, [third, third], 0.02, 8192))
    assert todo == {(i, j) for i in range(4) for j in range(4) if (i, j) != (3, 3)}


def _config(**monte_carlo_options):
    return psro.RunConfig(game="kuhn_poker", oracle="ppo", meta_solver="nash", max_nodes=10,
                          ppo={"env_steps": 4000, "num_envs": 32, "steps_per_update": 512},
                          monte_carlo={"tolerance": 0.05, "max_episodes": 4096,
                                       **monte_carlo_options}, seed=3,
                          lower_bound={"env_steps": 4000})


@pytest.mark.slow
def test_refined_runs_keep_the_cap_agree_with_exact_values_and_resume_exactly(kuhn, tmp_path):
    game, tree = kuhn
    config = _config(refine="support", iteration_episodes=6000)
    full = psro.PSRO(config=config, out=tmp_path / "a")
    rows = full.run(iterations=4)
    assert all(r["payoff_episodes"] <= 6000 for r in rows)
    assert full.table.refined, "some entry was refined after it was first filled"
    # coarse or refined, the entries agree with the exact values of the tabularised networks
    tables = [[TabularPolicy(p, tree.uniform_policy(p)) if k == 0 else tabularise(tree, m, p)
               for k, m in enumerate(pop)] for p, pop in enumerate(full.population)]
    plans = [np.stack([m.realization_plan(tree) for m in pop]) for pop in tables]
    exact = tree.payoff_block(plans)
    assert np.all(np.abs(full.table.values - exact) <= 4.5 * full.table.std_errs + 1e-12)
    # the refined entries are saved with the iteration that refined them
    loaded = psro.load_run(tmp_path / "a")
    np.testing.assert_array_equal(loaded.payoffs.values, full.table.values)
    np.testing.assert_array_equal(loaded.payoffs.counts, full.table.counts)
    part = psro.PSRO(config=config, out=tmp_path / "b")
    part.run(iterations=2)
    resumed = psro.PSRO.resume(tmp_path / "b")
    resumed.run(iterations=4)
    np.testing.assert_array_equal(resumed.table.values, full.table.values)
    np.testing.assert_array_equal(resumed.table.counts, full.table.counts)

    def numbers(row):
        return {k: v for k, v in row.items() if k not in TIMING}

    assert numbers(resumed.metrics[-1]) == numbers(full.metrics[-1])


@pytest.mark.slow
def test_refining_spends_fewer_episodes_than_filling_every_entry():
    # Kuhn's meta-Nash leaves members out of its support by iteration 3 at this seed
    every = psro.PSRO(config=_config()).run(iterations=3)
    support = psro.PSRO(config=_config(refine="support")).run(iterations=3)
    spent = [sum(r["payoff_episodes"] for r in rows) for rows in (every, support)]
    assert spent[1] < spent[0]


@pytest.mark.parametrize("options, message", [
    ({"refine": "some"}, "monte_carlo.refine must be one of all, support; got 'some'"),
    ({"iteration_episodes": 0}, "monte_carlo.iteration_episodes must be a positive integer"),
    ({"max_episodes": 10.5}, "monte_carlo.max_episodes must be a positive integer"),
    ({"min_episodes": 100, "max_episodes": 10},  # sampling stops at 10: 100 was ignored
     r"monte_carlo.min_episodes \(100\) is above max_episodes \(10\)"),
])
def test_bad_table_options_are_refused_naming_what_is_accepted(options, message):
    with pytest.raises(psro.ConfigError, match=message):
        _config(**options).validate()


def test_table_options_of_a_run_whose_table_is_not_estimated_are_refused(tmp_path):
    """A self-play baseline (meta-solver ``latest``, which reads no payoffs) estimates no
    payoff entries, so ``refine`` and ``iteration_episodes`` were accepted and never read;
    the options that also set the lower bound's estimates stay accepted. Runs an earlier
    version wrote so load and resume with those options dropped (they changed nothing)."""
    import dataclasses
    import json

    latest = dataclasses.replace(_config(), meta_solver="latest",
                                 ppo={"env_steps": 500, "num_envs": 8, "steps_per_update": 64})
    for key, value in (("refine", "support"), ("iteration_episodes", 1000)):
        with pytest.raises(psro.UnreadSettingError, match=f"monte_carlo.{key} has no effect in "
                                                          f"this run: meta-solver 'latest' "
                                                          f"reads no payoffs") as err:
            psro.PSRO(config=dataclasses.replace(
                latest, monte_carlo={**latest.monte_carlo, key: value}))
        assert err.value.setting == f"monte_carlo.{key}"
    psro.PSRO(config=dataclasses.replace(latest, meta_solver="nash",
                                         monte_carlo={"refine": "support"}))  # read: accepted
    whole = psro.PSRO(config=latest)
    whole.run(iterations=2)
    psro.PSRO(config=latest, out=tmp_path / "r").run(iterations=1)
    as_written_before_config_digests(tmp_path / "r")
    config = tmp_path / "r" / "config.json"
    saved = json.loads(config.read_text())
    saved["monte_carlo"]["refine"] = "support"  # as an earlier version wrote it
    config.write_text(json.dumps(saved))
    resumed = psro.PSRO.resume(tmp_path / "r")
    resumed.run(iterations=2)
    last = [{k: v for k, v in run.metrics[-1].items() if k not in TIMING}
            for run in (resumed, whole)]  # with the final lower bound of both
    assert last[0] == last[1] and last[0]["exploitability"] > 0
