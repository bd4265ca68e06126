"""Monte Carlo payoffs and PSRO on games too large to walk (forced here with max_nodes)."""

import numpy as np
import pytest
from conftest import TIMING, random_kuhn_profile

import psro
from psro.evaluation import monte_carlo
from psro.extensive_form.policies import TabularPolicy, tabularise


def test_confidence_intervals_cover_exact_values_at_the_stated_rate(kuhn):
    game, tree = kuhn
    profile = random_kuhn_profile(tree, 0)
    exact = tree.expected_returns([m.realization_plan(tree) for m in profile])[0]
    actors = [m.actor(tree) for m in profile]
    covered = 0
    trials = 60
    for seed in range(trials):
        est = monte_carlo.estimate_profile(game, actors, seed, tolerance=1e-9,
                                           min_episodes=400, max_episodes=400)
        assert est.count == 400
        covered += abs(est.mean[0] - exact) <= est.half_width[0]
    # Nominal 95%: 57 of 60 expected; 52 or fewer would happen with probability < 0.5%.
    assert covered >= 53


def test_adaptive_sampling_stops_at_tolerance_or_cap(kuhn):
    game, tree = kuhn
    actors = [m.actor(tree) for m in random_kuhn_profile(tree, 1)]
    est = monte_carlo.estimate_profile(game, actors, 0, tolerance=0.05, max_episodes=100_000)
    assert est.half_width.max() <= 0.05 and est.count < 100_000
    capped = monte_carlo.estimate_profile(game, actors, 0, tolerance=1e-6, max_episodes=1024)
    assert capped.count == 1024


def _config(**extra):
    return psro.RunConfig(game="kuhn_poker", oracle="ppo", meta_solver="nash", max_nodes=10,
                          ppo={"env_steps": 4000, "num_envs": 32, "steps_per_update": 512},
                          monte_carlo={"tolerance": 0.1, "max_episodes": 4096}, seed=3,
                          lower_bound={"env_steps": 4000}, **extra)


def test_psro_with_sampled_payoffs_and_approximate_exploitability(kuhn, tmp_path):
    game, tree = kuhn
    run = psro.PSRO("kuhn_poker", config=_config(), out=tmp_path / "run")
    rows = run.run(iterations=2)
    assert run.evaluator.name == "sampled" and run.tree is None
    assert all(r["exploitability"] is None for r in rows[:-1])
    last = rows[-1]
    assert last["exploitability_kind"] == "approximate_lower_bound"
    assert (run.table.counts >= 256).all() and (run.table.std_errs > 0).all()
    # Sampled entries agree with the exact values of the same (tabularised) networks.
    tables = [[TabularPolicy(p, tree.uniform_policy(p)) if k == 0 else tabularise(tree, m, p)
               for k, m in enumerate(pop)] for p, pop in enumerate(run.population)]
    plans = [np.stack([m.realization_plan(tree) for m in pop]) for pop in tables]
    exact = tree.payoff_block(plans)
    assert np.all(np.abs(run.table.values - exact) <= 4 * run.table.std_errs + 1e-12)
    # The approximate exploitability is a lower bound on the true one (up to sampling error).
    mixed = [w @ pl for w, pl in zip(run.mixtures, plans, strict=True)]
    true = psro.exact_exploitability(tree, mixed)
    for p in range(2):
        assert last[f"gain_p{p}"] <= true.gains[p] + 4 * last[f"gain_std_err_p{p}"]
    loaded = psro.load_run(tmp_path / "run")
    assert loaded.payoffs.counts.shape == (3, 3) and len(loaded.population[1]) == 3
    header = (tmp_path / "run" / "metrics.csv").read_text().splitlines()[0].split(",")
    assert {"gain_std_err_p0", "gain_std_err_p1", "meta_game_nash_conv"} <= set(header)


@pytest.mark.slow
def test_sampled_run_resumes_exactly_on_either_backend(tmp_path):
    full = psro.PSRO("kuhn_poker", config=_config(), out=tmp_path / "a")
    full.run(iterations=2)
    part = psro.PSRO("kuhn_poker", config=_config(), out=tmp_path / "b")
    part.run(iterations=1)
    resumed = psro.PSRO.resume(tmp_path / "b")
    resumed.use_backend("processes", workers=2)  # estimates and oracles in worker processes
    resumed.run(iterations=2)

    def numbers(row):
        return {k: v for k, v in row.items() if k not in TIMING}

    # Iteration 1 of the resumed run also carries the approximate exploitability measured
    # when that part stopped; everything after it matches the uninterrupted run.
    assert numbers(resumed.metrics[-1]) == numbers(full.metrics[-1])
    np.testing.assert_array_equal(resumed.table.values, full.table.values)


def test_target_exploitability_needs_a_walkable_game():
    with pytest.raises(psro.ConfigError, match="too large to walk"):
        psro.PSRO("kuhn_poker", config=_config(target_exploitability=0.1))


def test_networks_act_on_one_torch_thread_in_simulation_and_the_caller_keeps_its_own(kuhn):
    """Monte Carlo episodes run their networks on one torch thread whatever the caller's
    setting (workers side by side at one thread per core each were 8-10x slower on 2 cores:
    ``experiments/bench_payoff_threads.py``), with the same estimates, and the caller's thread
    count is back afterwards."""
    import torch

    game, tree = kuhn
    profile = random_kuhn_profile(tree, 2)
    seen = []

    class Watched:
        def __init__(self, actor):
            self.actor = actor

        def action_probs(self, *args):
            seen.append(torch.get_num_threads())
            return self.actor.action_probs(*args)

    before = torch.get_num_threads()
    estimates = []
    try:
        for threads in (2, 1):
            torch.set_num_threads(threads)
            actors = [Watched(m.actor(tree)) for m in profile]
            estimates.append(monte_carlo.estimate_profile(game, actors, 5, max_episodes=300,
                                                          min_episodes=300))
            assert torch.get_num_threads() == threads
    finally:
        torch.set_num_threads(before)
    assert seen and set(seen) == {1}
    np.testing.assert_array_equal(estimates[0].mean, estimates[1].mean)
