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
              out=out, iterations=3, **SAMPLED).run()
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
                 "env_steps=500"]) == 0
    assert "approximate lower bound" in capsys.readouterr().out
    assert main(["exploitability", "--run", str(run_dir), "--game", "leduc_poker"]) == 2
    assert "is not the run's game" in capsys.readouterr().err
    assert main(["exploitability", "--game", "kuhn_poker"]) == 2
    assert "--policy FILE or a run's meta-policy as --run DIR" in capsys.readouterr().err
