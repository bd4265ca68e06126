"""The liar's dice kernel against independent sources: its rules against pyspiel's on seeded
random histories (legal actions, returns, information-state strings and tensors), its
exploitability against OpenSpiel's own ``exploitability.nash_conv`` and against the toolkit's
sequence form, and its best response played against the policy by Monte Carlo."""

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import psro
from psro.kernels import kernel_for
from psro.kernels.exact import exact_exploitability
from psro.kernels.liars_dice import LiarsDiceRules

SMALL = ["liars_dice(numdice=1,dice_sides=4)", "liars_dice(numdice=1,dice_sides=3)",
         "liars_dice(numdice=2,dice_sides=2)"]
ALL = SMALL + ["liars_dice(numdice=1,dice_sides=6)", "liars_dice(numdice=2,dice_sides=3)",
               "liars_dice(numdice=2,dice_sides=5)"]


def _public(state, rules: LiarsDiceRules, player: int) -> tuple[int, int]:
    """The public state (bit mask of the bids made) and ``player``'s hand index of a pyspiel
    state, read from its history (chance deals player 0's dice, then player 1's)."""
    history = state.history()
    dealt = history[:2 * rules.numdice]
    hand = tuple(sorted(dealt[player * rules.numdice:(player + 1) * rules.numdice]))
    index = [tuple(h) for h in rules.hands.tolist()].index(hand)
    mask = 0
    for action in history[2 * rules.numdice:]:
        if action < rules.num_bids:
            mask |= 1 << action
    return mask, index


@pytest.mark.parametrize("spec", ALL)
def test_rules_equal_pyspiels_on_random_histories(spec):
    game = pyspiel.load_game(spec)
    rules = LiarsDiceRules.of(game)
    rng = np.random.default_rng(7)
    for _ in range(300):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(int(rng.integers(rules.sides)))
                continue
            p = state.current_player()
            mask, hand = _public(state, rules, p)
            masks = np.array([mask], dtype=np.int64)
            obs, legal = rules.info_tensors(masks, p)
            assert np.flatnonzero(legal[hand]).tolist() == state.legal_actions()
            assert obs[hand].tolist() == state.information_state_tensor(p)
            assert rules.info_strings(masks)[hand] == state.information_state_string(p)
            state.apply_action(int(rng.choice(state.legal_actions())))
        mask, h0 = _public(state, rules, 0)
        _, h1 = _public(state, rules, 1)
        bidder = (bin(mask).count("1") - 1) % 2
        truth = rules.true_bid[mask.bit_length() - 1, h0, h1]
        winner = bidder if truth else 1 - bidder
        assert state.returns() == [1.0 if winner == 0 else -1.0, 1.0 if winner == 1 else -1.0]


def _random_tabular(game, seed: int) -> openspiel_policy.TabularPolicy:
    policy = openspiel_policy.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    probs = rng.uniform(0.05, 1.0, policy.action_probability_array.shape) * \
        policy.legal_actions_mask
    policy.action_probability_array = probs / probs.sum(axis=1, keepdims=True)
    return policy


def _mapping(policy: openspiel_policy.TabularPolicy) -> dict:
    return {key: {str(a): float(p) for a, p in enumerate(policy.action_probability_array[i])
                  if policy.legal_actions_mask[i][a]}
            for key, i in policy.state_lookup.items()}


@pytest.mark.parametrize("spec", SMALL)
def test_exploitability_equals_openspiels(spec):
    game = pyspiel.load_game(spec)
    for seed in range(3):
        tabular = _random_tabular(game, seed)
        mapping = _mapping(tabular)
        mine = exact_exploitability(game, [[(mapping, 1.0)], [(mapping, 1.0)]])
        theirs = openspiel_exploitability.nash_conv(game, tabular)
        assert mine.nash_conv == pytest.approx(theirs, abs=1e-9)
        asked_at_states = exact_exploitability(game, [[(tabular, 1.0)], [(tabular, 1.0)]])
        assert asked_at_states.nash_conv == pytest.approx(theirs, abs=1e-9)
    uniform = openspiel_policy.UniformRandomPolicy(game)
    assert exact_exploitability(game, [[(uniform, 1.0)], [(uniform, 1.0)]]).nash_conv == \
        pytest.approx(openspiel_exploitability.nash_conv(game, uniform), abs=1e-9)


def test_a_mixture_is_the_sequence_form_mixture_of_its_members():
    """A meta-policy (two members a player, weights 0.3 and 0.7) against the toolkit's own
    sequence form of the walked game: the behavioural policy of the mixed realization plans."""
    spec = "liars_dice(numdice=1,dice_sides=4)"
    game = pyspiel.load_game(spec)
    members = [_mapping(_random_tabular(game, s)) for s in (1, 2)]
    weights = (0.3, 0.7)
    mine = exact_exploitability(game, [list(zip(members, weights, strict=True))] * 2)
    tree = psro.game_tree(spec)
    from psro.evaluation.user_policies import policy_tables

    plans = [sum(w * tree.realization_plan(p, policy_tables(tree, m)[p])
                 for m, w in zip(members, weights, strict=True)) for p in range(2)]
    theirs = psro.exact_exploitability(tree, plans)
    assert mine.nash_conv == pytest.approx(theirs.nash_conv, abs=1e-9)
    assert mine.values == pytest.approx(theirs.values, abs=1e-9)


def test_the_best_response_achieves_its_value_against_the_policy():
    spec = "liars_dice(numdice=1,dice_sides=4)"
    game = pyspiel.load_game(spec)
    rules = LiarsDiceRules.of(game)
    policy = _mapping(_random_tabular(game, 5))
    result = exact_exploitability(game, [[(policy, 1.0)], [(policy, 1.0)]])
    rng = np.random.default_rng(0)
    for player in range(2):
        returns = []
        for _ in range(20_000):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(int(rng.integers(rules.sides)))
                elif state.current_player() == player:
                    mask, hand = _public(state, rules, player)
                    state.apply_action(int(result.best_actions[player][mask, hand]))
                else:
                    probs = policy[state.information_state_string()]
                    actions = [int(a) for a in probs]
                    state.apply_action(int(rng.choice(actions, p=list(probs.values()))))
            returns.append(state.returns()[player])
        half = 1.96 * np.std(returns) / np.sqrt(len(returns))
        assert abs(np.mean(returns) - result.best_values[player]) <= half


def test_policies_that_do_not_fit_are_refused_in_one_line():
    game = pyspiel.load_game("liars_dice(numdice=1,dice_sides=4)")
    with pytest.raises(psro.PolicyError, match="has no entry for information state '1'"):
        exact_exploitability(game, [[({}, 1.0)], [({}, 1.0)]])
    bad = {key: {"0": 2.0} for key in _mapping(_random_tabular(game, 0))}
    with pytest.raises(psro.PolicyError):
        exact_exploitability(game, [[(bad, 1.0)], [(bad, 1.0)]])
    other = psro.rl.networks.ActorCritic(5, 3, (8,))
    from psro.rl.networks import NeuralPolicy

    with pytest.raises(psro.PolicyError, match="takes observations of size 5"):
        exact_exploitability(game, [[(NeuralPolicy(0, other, {}), 1.0)]] * 2)


def test_variants_the_kernel_does_not_implement_have_none():
    assert kernel_for(pyspiel.load_game("liars_dice(numdice=2,dice_sides=5)")) is LiarsDiceRules
    for spec in ("liars_dice(bidding_rule=reset-quantity)",
                 "liars_dice(numdice=3,dice_sides=6)", "kuhn_poker"):
        assert kernel_for(pyspiel.load_game(spec)) is None


def test_psro_exploitability_is_exact_on_a_game_too_large_to_walk():
    """With max_nodes below the tree, the walk is refused and the kernel measures it exactly:
    the same number as the walked sequence form."""
    spec = "liars_dice(numdice=1,dice_sides=4)"
    game = pyspiel.load_game(spec)
    policy = _mapping(_random_tabular(game, 3))
    walked = psro.exploitability(spec, policy)
    compiled = psro.exploitability(spec, policy, max_nodes=10)
    assert compiled.kind == "exact" and compiled.kernel is not None and walked.kernel is None
    assert compiled.nash_conv == pytest.approx(walked.nash_conv, abs=1e-9)
    with pytest.raises(psro.UnreadSettingError, match="a compiled kernel evaluates it exactly"):
        psro.exploitability(spec, policy, max_nodes=10, seed=3)


def test_a_run_too_large_to_walk_is_measured_exactly_and_so_is_its_suite_bound(tmp_path):
    """Liar's dice (1 die of 4 sides) run as too large to walk (max_nodes 10): its rows and the
    large tier's shared measurement are the kernel's exact values, equal to the walked sequence
    form's exploitability of the same meta-policy (tabularised on the walked tree)."""
    from psro.bench import Method, Suite, SuiteGame, run_suite
    from psro.extensive_form.policies import tabularise

    spec = "liars_dice(numdice=1,dice_sides=4)"
    settings = {"oracle": "ppo", "max_nodes": 10, "ppo": {"env_steps": 1500, "num_envs": 16},
                "monte_carlo": {"min_episodes": 64, "max_episodes": 128, "tolerance": 0.5}}
    suite = Suite("exact", (SuiteGame(spec, "Liar's dice 1x4", "large", (
        Method("psro", settings),), 60, env_steps=3000, response_steps=1000, thresholds=(),
        bound_every=1),), seeds=(0,))
    run_suite(suite, tmp_path / "s", quiet=True)
    run = psro.load_run(tmp_path / "s" / "liar-s-dice-1x4" / "psro" / "seed-0")
    measured = [r for r in run.metrics if r["exploitability"] is not None]
    assert measured and all(r["exploitability_kind"] == "exact" for r in measured)
    assert all(r["exploitability_half_width"] is None for r in measured)
    tree = psro.game_tree(spec)
    plans = [sum(w * tree.realization_plan(p, tree.uniform_policy(p) if m.kind == "uniform"
                                           else tabularise(tree, m, p).probs)
                 for m, w in zip(pop, mix, strict=True))
             for p, (pop, mix) in enumerate(zip(run.population, run.mixtures, strict=True))]
    walked = psro.exact_exploitability(tree, plans).exploitability
    assert measured[-1]["exploitability"] == pytest.approx(walked, abs=1e-9)
    import json

    bound = json.loads((tmp_path / "s" / "liar-s-dice-1x4" / "psro" /
                        "seed-0.bound.json").read_text())
    assert bound["exploitability_kind"] == "exact"
    assert bound["exploitability"] == pytest.approx(walked, abs=1e-9)


def test_head_to_head_values_equal_openspiels():
    """Two random tabular policies in both seats: the kernel's exact head-to-head values are
    OpenSpiel's expected returns of each seating."""
    from open_spiel.python.algorithms import expected_game_score

    from psro.kernels.exact import exact_head_to_head

    game = pyspiel.load_game("liars_dice(numdice=1,dice_sides=4)")
    a, b = _random_tabular(game, 11), _random_tabular(game, 12)
    first, second = exact_head_to_head(game, [[(a, 1.0)]] * 2, [[(b, 1.0)]] * 2)
    root = game.new_initial_state()
    assert first == pytest.approx(expected_game_score.policy_value(root, [a, b])[0], abs=1e-12)
    assert second == pytest.approx(expected_game_score.policy_value(root, [b, a])[1], abs=1e-12)
