"""PPO oracle: learns best responses, masks illegal actions, saves and loads, PSRO with PPO."""

import json

import numpy as np
import pyspiel
import pytest
from conftest import TIMING, as_written_before_config_digests

import psro
from games import load
from games.simulation import VectorGame
from psro.extensive_form.members import UniformMember
from psro.extensive_form.policies import TabularPolicy, tabularise
from psro.rl.networks import NeuralPolicy
from psro.rl.ppo import PPOConfig, train_best_response


def _fixed_opponent(tree, seed):
    rng = np.random.default_rng(seed)
    probs = tree.uniform_policy(1) * rng.uniform(0.1, 1, (tree.players[1].num_infosets, 2))
    return TabularPolicy(1, probs / probs.sum(axis=1, keepdims=True))


def test_ppo_learns_best_response_to_fixed_kuhn_policy(kuhn):
    game, tree = kuhn
    opponent = _fixed_opponent(tree, 3)
    plan = opponent.realization_plan(tree)
    _, best_value = tree.best_response(0, [None, plan])
    network, diagnostics = train_best_response(
        game, 0, [None, [opponent.actor(tree)]], [None, np.ones(1)],
        PPOConfig(env_steps=30_000), seed=0)
    learned = tabularise(tree, network, 0)
    value = tree.expected_returns([learned.realization_plan(tree), plan])[0]
    assert best_value - value < 0.02
    for key in ["mean_return", "approx_kl", "clip_fraction", "entropy", "explained_variance",
                "steps_per_s"]:
        assert np.isfinite(diagnostics[-1][key])


def test_masking_never_plays_illegal_actions(monkeypatch):
    game = pyspiel.load_game("leduc_poker")
    original = VectorGame.step
    illegal = []

    def checked_step(self, idx, actions):
        for i, a in zip(idx, actions, strict=True):
            if int(a) not in self.states[i].legal_actions():
                illegal.append((i, a))
        original(self, idx, actions)

    monkeypatch.setattr(VectorGame, "step", checked_step)
    network, _ = train_best_response(game, 1, [[UniformMember(0)], None], [np.ones(1), None],
                                     PPOConfig(env_steps=3000, num_envs=16,
                                               steps_per_update=256), seed=1)
    assert not illegal
    vg = VectorGame(game, 32, seed=0)
    players = vg.current_players()
    idx = np.flatnonzero(players == players[0])
    obs, mask = vg.tensors(idx, int(players[0]))
    probs = network.probs(obs, mask)
    assert np.all(probs[~mask] == 0) and np.allclose(probs.sum(axis=1), 1)


def test_greedy_member_plays_the_most_probable_legal_action():
    game = pyspiel.load_game("leduc_poker")
    sampled, _ = train_best_response(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                                     PPOConfig(env_steps=3000, num_envs=16, steps_per_update=256,
                                               greedy=False), seed=4)
    assert not sampled.greedy
    greedy = NeuralPolicy(0, sampled.net, {**sampled.metadata, "greedy": True})
    vg = VectorGame(game, 64, seed=0)
    idx = np.flatnonzero(vg.current_players() == 0)
    obs, mask = vg.tensors(idx, 0)
    probs, pure = sampled.probs(obs, mask), greedy.probs(obs, mask)
    assert np.all(probs[~mask] == 0) and np.all(probs[mask] > 0)  # sampled: every legal action
    np.testing.assert_array_equal(pure, np.eye(vg.num_actions)[probs.argmax(axis=1)])


def test_scaled_returns_train_the_same_policy_whatever_the_stakes():
    """With scale_returns, multiplying every payoff by 100 changes nothing but the logged
    returns (which stay in the game's units)."""
    runs = []
    for stakes in (1, 100):
        game = load(f"biased_rps(a={stakes},b={3 * stakes},c={2 * stakes})").pyspiel_game
        runs.append(train_best_response(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                                        PPOConfig(env_steps=2000, num_envs=32,
                                                  steps_per_update=256, greedy=False), seed=6))
    (small, small_log), (large, large_log) = runs
    vg = VectorGame(load("biased_rps").pyspiel_game, 1, seed=0)
    obs, mask = vg.tensors(np.arange(1), 0)
    np.testing.assert_allclose(small.probs(obs, mask), large.probs(obs, mask), atol=1e-5)
    np.testing.assert_allclose([100 * d["mean_return"] for d in small_log],
                               [d["mean_return"] for d in large_log], rtol=1e-6)


def test_save_load_round_trip(tmp_path, kuhn):
    game, tree = kuhn
    network, _ = train_best_response(game, 1, [[UniformMember(0)], None], [np.ones(1), None],
                                     PPOConfig(env_steps=2000), seed=2,
                                     metadata={"game": "kuhn_poker"})
    network.save(tmp_path / "member")
    loaded = NeuralPolicy.load(tmp_path / "member")
    assert loaded.player == 1 and loaded.metadata["game"] == "kuhn_poker"
    vg = VectorGame(game, 8, seed=0)
    obs, mask = vg.tensors(np.arange(8), 1)
    np.testing.assert_array_equal(network.probs(obs, mask), loaded.probs(obs, mask))
    (tmp_path / "member.json").write_text("{}")
    with pytest.raises(ValueError, match="format version"):
        NeuralPolicy.load(tmp_path / "member")


def test_ppo_config_rejects_unknown_and_bad_options():
    with pytest.raises(ValueError, match="unknown PPO option"):
        PPOConfig.from_dict({"env_step": 10})
    with pytest.raises(ValueError, match="clip"):
        PPOConfig.from_dict({"clip": -1})
    with pytest.raises(ValueError, match="greedy must be true or false"):
        PPOConfig.from_dict({"greedy": 1})
    with pytest.raises(psro.ConfigError, match="unknown PPO option"):
        psro.PSRO("kuhn_poker", "ppo", "nash", config=psro.RunConfig(
            game="kuhn_poker", oracle="ppo", ppo={"lr": 1}))


SMALL = {"env_steps": 6000, "num_envs": 32, "steps_per_update": 512}


def test_a_budget_spent_before_any_episode_ends_is_refused_not_an_untrained_response(tmp_path):
    """``env_steps`` below what one step of ``num_envs`` games and an episode take (100 of
    256 games on Kuhn) made no update, and the untrained network joined the population as a
    best response; the run reported it like any other."""
    run = psro.PSRO("kuhn_poker", "ppo", "nash", ppo={"env_steps": 100}, out=tmp_path / "r")
    with pytest.raises(psro.ConfigError, match=r"ppo.env_steps \(100\) was spent before any "
                                               r"episode of player 0 ended, so its best "
                                               r"response was never trained: ppo.num_envs "
                                               r"\(256\)"):
        run.run(iterations=1)
    assert len(psro.load_run(tmp_path / "r").metrics) == 1  # iteration 0 is kept
    rows = psro.PSRO("kuhn_poker", "ppo", "nash", ppo={"env_steps": 100, "num_envs": 8}).run(
        iterations=1)  # 8 games: episodes end within the budget
    assert rows[-1]["env_steps"] >= 200


def test_a_plateau_tolerance_without_patience_is_refused_and_old_runs_with_one_resume(tmp_path):
    """``plateau_tol`` alone was accepted and never read (``plateau_patience`` 0 never stops
    early), so a run meant to stop at plateaus trained every step without a word. Runs an
    earlier version wrote so resume with the numbers they would have had."""
    with pytest.raises(psro.UnreadSettingError, match="ppo.plateau_tol has no effect while "
                                                      "ppo.plateau_patience is 0") as err:
        PPOConfig.from_dict({"plateau_tol": 0.1})
    assert err.value.setting == "ppo.plateau_tol"
    with pytest.raises(psro.ConfigError, match="lower_bound.ppo: ppo.plateau_tol has no effect"):
        psro.RunConfig(game="kuhn_poker", lower_bound={"ppo": {"plateau_tol": 0.1}}).validate()
    PPOConfig.from_dict({"plateau_tol": 0.1, "plateau_patience": 2})  # read: accepted
    ppo = {**SMALL, "env_steps": 1000}
    whole = psro.PSRO("kuhn_poker", "ppo", "nash", config=psro.RunConfig(
        game="kuhn_poker", oracle="ppo", ppo=ppo))
    whole.run(iterations=2)
    psro.PSRO("kuhn_poker", "ppo", "nash", out=tmp_path / "r", config=psro.RunConfig(
        game="kuhn_poker", oracle="ppo", ppo=ppo)).run(iterations=1)
    as_written_before_config_digests(tmp_path / "r")
    config = tmp_path / "r" / "config.json"
    saved = json.loads(config.read_text())
    saved["ppo"]["plateau_tol"] = 0.3  # as an earlier version wrote it
    config.write_text(json.dumps(saved))
    resumed = psro.PSRO.resume(tmp_path / "r")
    resumed.run(iterations=2)
    assert [r["exploitability"] for r in resumed.metrics] == \
        [r["exploitability"] for r in whole.metrics]


@pytest.mark.slow
def test_psro_with_ppo_on_matrix_game_lowers_exploitability():
    # Without warm starts: a network saturated on one action (greedy members make that
    # likely) needs many steps to move to another; see the README on warm_start.
    config = psro.RunConfig(game="biased_rps", oracle="ppo", meta_solver="nash",
                            ppo={**SMALL, "warm_start": False})
    run = psro.PSRO(config.game, config=config)
    rows = run.run(iterations=6)
    # Uniform play is exploitable by 1/3; PSRO with PPO best responses finds the equilibrium.
    assert rows[0]["exploitability"] == pytest.approx(1 / 3)
    assert rows[-1]["exploitability"] < 0.05


@pytest.mark.slow
def test_ppo_run_is_deterministic_resumes_exactly_and_backends_agree(tmp_path):
    config = psro.RunConfig(game="kuhn_poker", oracle="ppo", meta_solver="nash",
                            ppo={**SMALL, "env_steps": 3000}, seed=5)

    def numbers(rows):
        return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]

    full = psro.PSRO(config.game, config=config, out=tmp_path / "a")
    full.run(iterations=3)
    part = psro.PSRO(config.game, config=config, out=tmp_path / "b")
    part.run(iterations=1)
    with open(tmp_path / "b" / "oracle_log.jsonl", "a") as log:  # killed after logging an
        log.write('{"iteration": 2, "update": 1}\n{"iterat')    # update, before the checkpoint
    resumed = psro.PSRO.resume(tmp_path / "b")
    resumed.use_backend("processes", workers=2)  # both players' oracles in parallel
    resumed.run(iterations=3)
    assert numbers(resumed.metrics) == numbers(full.metrics)
    saved = psro.RunConfig.from_dict(json.loads((tmp_path / "a" / "config.json").read_text()))
    assert saved.ppo == {**PPOConfig().to_dict(), **SMALL, "env_steps": 3000}  # all written
    assert (tmp_path / "b" / "networks" / "player1_member3.pt").is_file()
    log = (tmp_path / "b" / "oracle_log.jsonl").read_text().splitlines()
    speed = {"steps_per_s", "rollout_steps_per_s", "wall_s"}

    def updates(rows):
        return [{k: v for k, v in r.items() if k not in speed} for r in rows]

    assert updates(json.loads(row) for row in log) == \
        updates(json.loads(json.dumps(full.oracle_log)))


def test_load_run_of_a_ppo_run_on_a_simultaneous_game(tmp_path):
    config = psro.RunConfig(game="biased_rps", oracle="ppo", meta_solver="nash",
                            ppo={**SMALL, "env_steps": 1000}, iterations=1)
    psro.PSRO(config.game, config=config, out=tmp_path).run()
    loaded = psro.load_run(tmp_path)
    assert loaded.population[0][1].network is not None  # the network behind the table
    tree = loaded.tree  # walked on the turn-based game, as the run did
    state = tree.game.new_initial_state()
    probs = loaded.meta_policy().action_probabilities(state)
    assert sum(probs.values()) == pytest.approx(1.0)


def test_learning_rate_decays_to_zero_over_the_env_step_budget():
    """The rate anneals on the fraction of env_steps spent (every player's decisions), so in a
    two-player game it ends near 0, not near half its start."""
    game = pyspiel.load_game("kuhn_poker")
    config = PPOConfig(env_steps=20_000, steps_per_update=1024)
    _, log = train_best_response(game, 0, [None, [UniformMember(1)]], [None, np.ones(1)],
                                 config, seed=0)
    rates = [d["learning_rate"] for d in log]
    assert rates[0] == config.learning_rate
    assert rates[-1] < 0.15 * config.learning_rate  # one batch of ~2,300 env steps remains
    spent = [0] + [d["env_steps"] for d in log[:-1]]
    np.testing.assert_allclose(rates, config.learning_rate * (1 - np.array(spent) / 20_000))
