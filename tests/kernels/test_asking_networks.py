"""Networks asked by the exact kernels: several batches at once on threads, each a block of rows
at a time on one torch thread. The numbers are those of the module's own forward (bit for bit
where the rows are the same), the result does not depend on the threads, and it equals
OpenSpiel's exploitability of the same networks asked state by state."""

import numpy as np
import pyspiel
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from open_spiel.python import policy as openspiel_policy
from open_spiel.python.algorithms import exploitability as openspiel_exploitability

import psro.kernels.liars_dice as liars_dice
import psro.kernels.placement_exact as placement_exact
from psro.kernels.asking import batch_probs
from psro.kernels.exact import exact_exploitability
from psro.kernels.placement_exact import placement_exploitability
from psro.rl.networks import BLOCK_ROWS, ActorCritic, NeuralPolicy, blocked_actor, one_thread


def _network(size: int, actions: int, seed: int, hidden=(128, 128)) -> ActorCritic:
    """A network whose weights are away from the initial scale, as after training."""
    torch.manual_seed(seed)
    net = ActorCritic(size, actions, hidden)
    for layer in net.actor:
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.normal_(layer.weight, std=0.5)
            torch.nn.init.normal_(layer.bias, std=0.5)
    return net


@settings(max_examples=10, deadline=None)
@given(rows=st.sampled_from([1, 7, BLOCK_ROWS, 2 * BLOCK_ROWS + 1, 3 * BLOCK_ROWS - 1,
                             3 * BLOCK_ROWS + 5, 40_000]),
       hidden=st.sampled_from([(128, 128), (64,), (32, 48, 16)]),
       seed=st.integers(0, 2**16))
def test_a_blocked_forward_is_the_modules_bit_for_bit(rows, hidden, seed):
    net = _network(33, 21, seed, hidden)
    obs = torch.as_tensor((np.random.default_rng(seed).random((rows, 33)) < 0.3)
                          .astype(np.float32))
    with torch.no_grad():
        expected = net.actor(obs)  # torch's threads, as the kernels asked before
        assert torch.equal(blocked_actor(net.actor, obs), expected)
        with one_thread():
            if rows > BLOCK_ROWS:  # the blocks on one thread: the rows computed alike
                assert torch.equal(blocked_actor(net.actor, obs), expected)
            else:  # a small product may take another path on one thread than on several
                assert torch.equal(blocked_actor(net.actor, obs), net.actor(obs))


def test_other_modules_are_called_as_they_are():
    torch.manual_seed(0)
    relu = torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 3))
    obs = torch.rand(3 * BLOCK_ROWS, 5)
    with torch.no_grad(), one_thread():
        assert torch.equal(blocked_actor(relu, obs), relu(obs))


def _openspiel_policy(game, seats) -> openspiel_policy.TabularPolicy:
    """The networks asked one state at a time, as an OpenSpiel tabular policy."""
    table = openspiel_policy.TabularPolicy(game)
    for index, state in enumerate(table.states):
        player = state.current_player()
        legal = np.zeros((1, game.num_distinct_actions()), dtype=bool)
        legal[0, state.legal_actions()] = True
        obs = np.array([state.information_state_tensor(player)], dtype=np.float32)
        table.action_probability_array[index] = sum(
            w * m.probs(obs, legal)[0] for m, w in seats[player])
    return table


def test_liars_dice_networks_on_threads_equal_openspiels(monkeypatch):
    """Liar's dice with 1 die of 6 sides: 12,288 information sets a player in one batch (a
    blocked forward), then in batches of 768 (12 chunks, several asked at once)."""
    spec = "liars_dice(numdice=1,dice_sides=6)"
    game = pyspiel.load_game(spec)
    size, actions = game.information_state_tensor_size(), game.num_distinct_actions()
    seats = [[(NeuralPolicy(p, _network(size, actions, 10 + p), {"player": p}), 1.0)]
             for p in range(2)]
    results = []
    for threads, chunk in ((1, liars_dice.CHUNK), (2, liars_dice.CHUNK), (2, 256)):
        monkeypatch.setenv("PSRO_KERNEL_THREADS", str(threads))
        monkeypatch.setattr("psro.kernels.liars_dice_exact.CHUNK", chunk)
        results.append(exact_exploitability(game, seats))
    assert results[0].nash_conv == results[1].nash_conv  # bit for bit
    assert results[2].nash_conv == pytest.approx(results[0].nash_conv, abs=1e-12)
    theirs = openspiel_exploitability.nash_conv(game, _openspiel_policy(game, seats))
    assert results[0].nash_conv == pytest.approx(theirs, abs=1e-6)  # float32 networks


def test_placement_networks_on_threads_give_one_result(monkeypatch):
    """Dark hex 3 below an opening, members of two networks a player asked in chunks of 512
    information sets, on one thread and on two: the same sequence forms and values."""
    spec = "dark_hex(gameversion=cdh,board_size=3,obstype=reveal-nothing)"
    game = pyspiel.load_game(spec)
    size, actions = game.information_state_tensor_size(), game.num_distinct_actions()
    seats = [[(NeuralPolicy(p, _network(size, actions, 20 + 2 * p + k), {"player": p}), w)
              for k, w in enumerate((0.4, 0.6))] for p in range(2)]
    monkeypatch.setattr(placement_exact, "CHUNK", 512)
    results = []
    for threads in (1, 2):
        monkeypatch.setenv("PSRO_KERNEL_THREADS", str(threads))
        results.append(placement_exploitability(game, seats, batch_probs, (0, 1, 7, 6)))
    assert results[0].information_sets > 4 * 512
    np.testing.assert_allclose(results[1].best_values, results[0].best_values, atol=1e-12)
    np.testing.assert_allclose(results[1].values, results[0].values, atol=1e-12)
