"""A run's meta-policy on a game whose payoffs were sampled (Kuhn declared too large to walk):
an OpenSpiel policy whose behavioural mixture is the per-episode mixture of its networks
(Kuhn's theorem, checked against the weighted values of every pure profile), readable by
OpenSpiel's own exploitability and by ``psro exploitability --run``."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability as os_exploitability
from open_spiel.python.algorithms.expected_game_score import policy_value

import psro
from psro.cli import main
from psro.evaluation.sampled_policy import SampledMetaPolicy

SAMPLED = {"max_nodes": 50, "monte_carlo": {"min_episodes": 64, "max_episodes": 128}}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sampled") / "run"
    psro.PSRO("kuhn_poker", "ppo", ppo={"env_steps": 800, "greedy": False}, seed=2,
              out=out, iterations=3, lower_bound={"env_steps": 800}, **SAMPLED).run()
    return out


def test_the_behavioural_mixture_is_the_mixture_of_pure_profiles(run_dir):
    policy = psro.load_run(run_dir).meta_policy()
    assert isinstance(policy, SampledMetaPolicy)
    game = pyspiel.load_game("kuhn_poker")
    (pop0, pop1), (w0, w1) = policy.seats
    assert len(pop0) == 4 and abs(w0.sum() - 1) < 1e-9
    mixed = 0.0
    for i, a in enumerate(pop0):
        for j, b in enumerate(pop1):
            pure = SampledMetaPolicy(game, [[a], [b]], [np.ones(1), np.ones(1)])
            mixed += w0[i] * w1[j] * policy_value(game.new_initial_state(), [pure, pure])[0]
    behavioural = policy_value(game.new_initial_state(), [policy, policy])[0]
    assert behavioural == pytest.approx(mixed, abs=1e-9)
    drawn = policy.draw(np.random.default_rng(0))
    assert all(len(mine) == 1 and mine[0] in pop
               for mine, pop in zip(drawn.seats[0], policy.seats[0], strict=True))


def test_openspiel_and_the_toolkit_agree_on_its_exploitability(run_dir, capsys):
    policy = psro.load_run(run_dir).meta_policy()
    game = pyspiel.load_game("kuhn_poker")
    ours = psro.exploitability("kuhn_poker", policy)
    assert ours.kind == "exact"
    assert ours.exploitability == pytest.approx(os_exploitability.exploitability(game, policy),
                                                abs=1e-9)
    assert main(["exploitability", "--run", str(run_dir)]) == 0
    assert f"exploitability {ours.exploitability:.9g}" in capsys.readouterr().out
    assert main(["exploitability", "--run", str(run_dir), "--max-nodes", "50", "--ppo",
                 "env_steps=500", "--ppo", "num_envs=16"]) == 0
    assert "approximate lower bound" in capsys.readouterr().out
    assert main(["exploitability", "--run", str(run_dir), "--game", "leduc_poker"]) == 2
    assert "is not the run's game" in capsys.readouterr().err
    assert main(["exploitability", "--game", "kuhn_poker"]) == 2
    assert "--policy FILE or a run's meta-policy as --run DIR" in capsys.readouterr().err


def test_the_lower_bound_measured_during_a_run_stays_below_the_exact_value(tmp_path):
    run = psro.PSRO("kuhn_poker", "ppo", ppo={"env_steps": 600}, seed=4, iterations=4,
                    lower_bound={"every": 2, "env_steps": 6000}, out=tmp_path / "r", **SAMPLED)
    rows = run.run()
    measured = [r["iteration"] for r in rows if r["exploitability"] is not None]
    assert measured == [2, 4]
    exact = psro.exploitability("kuhn_poker", run.meta_policy()).exploitability
    last = rows[-1]
    assert last["exploitability_kind"] == "approximate_lower_bound"
    # a lower bound, up to its Monte Carlo interval, and no empty one on this budget
    assert 0 < last["exploitability"] <= exact + last["exploitability_half_width"]
    log = psro.load_run(tmp_path / "r").state.oracle_log
    assert {r["iteration"] for r in log if r.get("purpose") == "lower_bound"} == {2, 4}
    with pytest.raises(psro.UnreadSettingError, match="lower_bound has no effect") as refused:
        psro.PSRO("kuhn_poker", "exact", lower_bound={"every": 2})
    assert refused.value.setting == "lower_bound"
    with pytest.raises(psro.ConfigError, match="unknown lower_bound option"):
        psro.PSRO("kuhn_poker", "ppo", lower_bound={"each": 2}, **SAMPLED)


def test_methods_whose_oracles_train_differently_get_their_bounds_alike():
    """The lower bound's responses have their own PPO options, never the oracle's: two runs of
    one seed that differ only in their oracles' PPO options measure the same bound of the same
    meta-policy (iteration 0's uniform members) with the same responses. (They used to train
    with each run's options: a self-play baseline at entropy 0.1 got a weaker response, so a
    lower bound, than PSRO at 0.01.)"""
    bound = {"env_steps": 2000, "ppo": {"num_envs": 32, "steps_per_update": 256}}
    rows = []
    for ppo in ({}, {"entropy_coef": 0.5, "greedy": False, "learning_rate": 1e-4}):
        run = psro.PSRO("kuhn_poker", "ppo", seed=5, lower_bound=bound, ppo=ppo, **SAMPLED)
        run.step()  # iteration 0: the uniform members, whatever the oracle
        rows.append(run.evaluator.finish(run.state, run.backend))
    assert rows[0]["exploitability_kind"] == "approximate_lower_bound"
    keys = ("exploitability", "gain_p0", "gain_p1", "value_p0")
    assert [rows[0][k] for k in keys] == [rows[1][k] for k in keys]
    # and the uniform policy's exploitability (0.4583) is what the bound approaches
    assert 0.2 < rows[0]["exploitability"] < 0.4583 + rows[0]["exploitability_half_width"]
    with pytest.raises(psro.ConfigError, match="lower_bound.ppo.env_steps"):
        psro.PSRO("kuhn_poker", "ppo", lower_bound={"ppo": {"env_steps": 5}}, **SAMPLED)
    with pytest.raises(psro.ConfigError, match="lower_bound.ppo: unknown PPO option"):
        psro.PSRO("kuhn_poker", "ppo", lower_bound={"ppo": {"entropy": 5}}, **SAMPLED)


def test_a_run_whose_final_bound_is_measured_elsewhere_trains_no_response_at_its_end(tmp_path):
    """``lower_bound.final = false`` (what a suite sets, as it measures every run's final
    meta-policy itself): the bounds asked for during the run are measured, none when it stops,
    and no response is trained then (the oracle log holds the during-run ones only)."""
    ppo = {"env_steps": 400, "num_envs": 16}
    run = psro.PSRO("kuhn_poker", "ppo", ppo=ppo, seed=4, iterations=3,
                    lower_bound={"every": 2, "env_steps": 1000, "final": False},
                    out=tmp_path / "r", **SAMPLED)
    rows = run.run()
    assert [r["iteration"] for r in rows if r["exploitability"] is not None] == [2]
    log = psro.load_run(tmp_path / "r").state.oracle_log
    assert {r["iteration"] for r in log if r.get("purpose") == "lower_bound"} == {2}
    # by default the final meta-policy is measured too
    rows = psro.PSRO("kuhn_poker", "ppo", ppo=ppo, seed=4, iterations=3,
                     lower_bound={"every": 2, "env_steps": 1000}, **SAMPLED).run()
    assert [r["iteration"] for r in rows if r["exploitability"] is not None] == [2, 3]
    with pytest.raises(psro.ConfigError, match="lower_bound.final must be true or false"):
        psro.PSRO("kuhn_poker", "ppo", lower_bound={"final": "no"}, **SAMPLED)
    with pytest.raises(psro.ConfigError, match="lower_bound.env_steps would be read by no "
                                               "measurement"):
        psro.PSRO("kuhn_poker", "ppo", lower_bound={"final": False, "env_steps": 9}, **SAMPLED)


def test_a_baseline_whose_meta_solver_reads_no_payoffs_estimates_none(tmp_path):
    import numpy as np

    import solvers

    assert not solvers.reads_payoffs("latest") and solvers.reads_payoffs("nash")
    rows = psro.PSRO("kuhn_poker", "ppo", "latest", ppo={"env_steps": 400, "num_envs": 16,
                                                         "greedy": False},
                     iterations=2, out=tmp_path / "r", lower_bound={"env_steps": 2000},
                     **SAMPLED).run()
    assert [r["entries_evaluated"] for r in rows] == [0, 0, 0]
    assert rows[-1]["exploitability"] is not None  # the lower bound is still measured
    table = psro.load_run(tmp_path / "r").payoffs
    assert np.isnan(table.values).all() and (table.counts == 0).all()
    nash = psro.PSRO("kuhn_poker", "ppo", "nash", ppo={"env_steps": 400, "num_envs": 16},
                     iterations=1, lower_bound={"env_steps": 2000},
                     **SAMPLED).run()
    assert [r["entries_evaluated"] for r in nash] == [1, 3]


def test_rounding_of_a_mixture_above_one_is_accepted_and_a_real_excess_is_refused():
    game = pyspiel.load_game("kuhn_poker")
    from open_spiel.python import policy as os_policy

    tabular = os_policy.TabularPolicy(game)
    tabular.action_probability_array[:] = [1.0 + 2e-16, 0.0]  # a quotient's rounding
    assert psro.exploitability("kuhn_poker", tabular).exploitability == pytest.approx(
        os_exploitability.exploitability(game, tabular), abs=1e-12)
    tabular.action_probability_array[:] = [1.1, -0.1]
    with pytest.raises(psro.PolicyError, match="is not in \\[0, 1\\]"):
        psro.exploitability("kuhn_poker", tabular)
