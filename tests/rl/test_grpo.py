"""GRPO oracle: group-relative advantages, groups that share their deal and opponent, best
responses it learns, runs of every variant that trains, and its refusals."""

import json

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability as openspiel_exploitability
from scipy import stats

import psro
from psro.errors import ConfigError
from psro.extensive_form.members import UniformMember
from psro.extensive_form.policies import TabularPolicy, tabularise
from psro.rl.config import GRPOOptions, PPOConfig, Training
from psro.rl.grpo import group_advantages, train_grpo
from psro.rl.networks import NeuralPolicy
from psro.rl.rollout import GroupedRollouts


def test_group_advantages_are_the_groups_z_scores():
    rng = np.random.default_rng(0)
    for _ in range(20):
        returns = rng.choice([-2.0, -1.0, 0.0, 1.0, 3.0], size=int(rng.integers(2, 12)))
        expected = np.zeros(len(returns)) if np.ptp(returns) == 0 else stats.zscore(returns)
        np.testing.assert_allclose(group_advantages(returns), expected, atol=1e-7)
    np.testing.assert_allclose(group_advantages([1, -1, 1, 1]),
                               [1 / np.sqrt(3), -np.sqrt(3), 1 / np.sqrt(3), 1 / np.sqrt(3)],
                               atol=1e-7)


def _chance_outcomes(state):
    return [pa.action for pa in state.full_history() if pa.player == pyspiel.PlayerId.CHANCE]


def test_a_groups_episodes_share_their_deal_and_opponent_member():
    """Leduc: every episode of a group is dealt the same private cards and, where it reaches
    the second round, the same public card, and plays the same opponent member; groups differ
    from each other."""
    game = pyspiel.load_game("leduc_poker")
    members = [UniformMember(1), UniformMember(1), UniformMember(1)]
    games = GroupedRollouts(game, [None, members], [None, np.ones(3)], 32,
                            np.random.default_rng(1), env_seed=2, group_size=4)
    rng = np.random.default_rng(3)
    episodes: dict[int, list] = {}
    while sum(len(v) for v in episodes.values()) < 2000:
        players = games.current_players()
        finished = games.finished(players)
        for i in finished.tolist():
            state = games.vg.states[i]
            episodes.setdefault(int(games.group[i]), []).append(
                (_chance_outcomes(state), int(games.choice[i, 1])))
        games.restart(finished, players)
        learner = np.flatnonzero(players == 0)
        if learner.size:
            _, mask = games.vg.tensors(learner, 0)
            games.vg.step(learner, [rng.choice(np.flatnonzero(m)) for m in mask])
        games.play_members(players)
    complete = [v for v in episodes.values() if len(v) == 4]
    assert len(complete) > 300
    public_shared = 0
    for group in complete:
        deals = [tuple(chance[:2]) for chance, _ in group]
        assert len(set(deals)) == 1
        assert len({member for _, member in group}) == 1
        publics = {chance[2] for chance, _ in group if len(chance) > 2}
        assert len(publics) <= 1
        public_shared += sum(len(chance) > 2 for chance, _ in group) >= 2
    assert public_shared > 50
    assert len({tuple(group[0][0][:2]) for group in complete}) == 30  # every deal occurs
    assert len({group[0][1] for group in complete}) == 3


def _fixed_opponent(tree, seed):
    rng = np.random.default_rng(seed)
    probs = tree.uniform_policy(1) * rng.uniform(0.1, 1, (tree.players[1].num_infosets, 2))
    return TabularPolicy(1, probs / probs.sum(axis=1, keepdims=True))


def test_grpo_learns_a_best_response_to_a_fixed_kuhn_policy(kuhn):
    """The greedy member it trains is within 0.02 of the best response's value, computed by
    OpenSpiel against the same policy."""
    game, tree = kuhn
    opponent = _fixed_opponent(tree, 3)
    training = Training(game, 0, [None, [opponent.actor(tree)]], [None, np.ones(1)],
                        PPOConfig(env_steps=30_000), seed=0)
    network, diagnostics = train_grpo(training, GRPOOptions())
    assert network.net.critic is None
    learned = tabularise(tree, network, 0)
    plan = opponent.realization_plan(tree)
    value = tree.expected_returns([learned.realization_plan(tree), plan])[0]
    table = openspiel_policy.TabularPolicy(game)
    for i, key in enumerate(tree.players[1].keys):
        table.action_probability_array[table.state_lookup[key]] = opponent.probs[i]
    best = openspiel_exploitability.best_response(game, table, 0)["best_response_value"]
    assert best - value < 0.02
    for key in ("mean_return", "approx_kl", "kl_reference", "clip_fraction", "entropy",
                "steps_per_s"):
        assert np.isfinite(diagnostics[-1][key])
    assert sum(d["groups"] for d in diagnostics) * 8 >= 30_000 / 2 / 2


def test_a_large_kl_weight_keeps_the_response_at_its_reference():
    """With kl_coef 10 the response's KL to its start stays far below the one without it."""
    game = pyspiel.load_game("kuhn_poker")
    training = Training(game, 1, [[UniformMember(0)], None], [np.ones(1), None],
                        PPOConfig(env_steps=12_000, num_envs=64, steps_per_update=512), seed=4)
    free = train_grpo(training, GRPOOptions(kl_coef=0.0))[1]
    held = train_grpo(training, GRPOOptions(kl_coef=10.0))[1]
    assert held[-1]["kl_reference"] < 0.2 * free[-1]["kl_reference"]


def test_the_network_without_a_critic_saves_and_loads(tmp_path):
    game = pyspiel.load_game("kuhn_poker")
    training = Training(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                        PPOConfig(env_steps=2_000, num_envs=32, steps_per_update=128), seed=0)
    network, _ = train_grpo(training, GRPOOptions(group_size=4))
    network.save(tmp_path / "net")
    loaded = NeuralPolicy.load(tmp_path / "net")
    assert loaded.net.critic is None and loaded.metadata["grpo"]["group_size"] == 4
    obs = np.random.default_rng(0).random((5, network.net.actor[0].in_features), np.float32)
    mask = np.ones((5, 2), bool)
    np.testing.assert_allclose(loaded.probs(obs, mask), network.probs(obs, mask))


SMALL = {"env_steps": 1_500, "num_envs": 32, "steps_per_update": 128}


@pytest.mark.parametrize("algorithm", ["psro", "rectified", "anytime", "xdo", "jpsro",
                                       "pipeline"])
def test_every_variant_that_trains_runs_with_grpo(tmp_path, algorithm):
    """Each run's final exploitability is OpenSpiel's of the run's meta-policy."""
    rows = psro.PSRO("kuhn_poker", "grpo", algorithm=algorithm, ppo=SMALL, seed=1,
                     oracle_options={"group_size": 4}, out=tmp_path / algorithm).run(2)
    loaded = psro.load_run(tmp_path / algorithm)
    assert loaded.metrics[-1]["iteration"] == rows[-1]["iteration"] >= 1
    assert loaded.population[0][-1].metadata["oracle"] in ("grpo", "xdo_restricted_nash")
    reference = openspiel_exploitability.nash_conv(
        pyspiel.load_game("kuhn_poker"), loaded.meta_policy())
    assert rows[-1]["nash_conv"] == pytest.approx(reference, abs=1e-9)


def test_a_grpo_run_records_its_options_and_repeats_its_numbers_on_every_backend(tmp_path):
    config = psro.RunConfig(game="leduc_poker", oracle="grpo", ppo=SMALL, seed=3,
                            oracle_options={"kl_coef": 0.1})
    first = psro.PSRO(config=config, out=tmp_path / "a").run(2)
    second = psro.PSRO(config=config, backend="processes", workers=2).run(2)
    recorded = json.loads((tmp_path / "a" / "config.json").read_text())
    assert recorded["oracle"] == "grpo"
    assert recorded["oracle_options"] == {"group_size": 8, "kl_coef": 0.1}
    assert [r["exploitability"] for r in first] == [r["exploitability"] for r in second]
    resumed = psro.PSRO.resume(tmp_path / "a").run(3)  # a third iteration after a stop
    assert resumed[:3] == first and resumed[-1]["exploitability"] == \
        psro.PSRO(config=config).run(3)[-1]["exploitability"]


@pytest.mark.parametrize("overrides, message", [
    ({"ppo": {"gae_lambda": 0.9}}, "ppo.gae_lambda is read by PPO's critic"),
    ({"ppo": {"scale_returns": False}}, "ppo.scale_returns is read by PPO's critic"),
    ({"oracle_options": {"group_size": 7}}, "group_size (7) must divide ppo.num_envs (256)"),
    ({"oracle_options": {"group_size": 1}}, "group_size must be an integer from 2"),
    ({"oracle_options": {"kl_coef": -1}}, "kl_coef must be a number in [0, 10]"),
    ({"oracle_options": {"groups": 4}}, "unknown grpo option(s) groups"),
    ({"algorithm": "diverse"}, "oracle 'grpo' does not"),
])
def test_bad_grpo_settings_are_refused_before_training(tmp_path, overrides, message):
    config = psro.RunConfig(game="kuhn_poker", oracle="grpo").merged(overrides)
    with pytest.raises(ConfigError) as err:
        psro.PSRO(config=config, out=tmp_path / "run")
    assert message in str(err.value)
    assert not (tmp_path / "run").exists()


def test_a_game_that_samples_its_own_chance_outcomes_is_refused(tmp_path):
    """In a sampled-stochastic game the game draws chance outcomes itself, so a group cannot
    be dealt the same ones."""
    spec = "bridge_uncontested_bidding"
    assert pyspiel.load_game(spec).get_type().chance_mode == \
        pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    with pytest.raises(ConfigError, match="sampled by the game itself"):
        psro.PSRO(spec, "grpo", out=tmp_path / "r")
