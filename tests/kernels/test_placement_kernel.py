"""The placement kernel (phantom tic-tac-toe, dark hex) against independent sources: its rules
against pyspiel's on seeded random histories (legal actions, returns, information-state
tensors and strings), its best responses and values against a walk of pyspiel states written
here (OpenSpiel's recursive best response, information sets keyed by pyspiel's tensors) on
subgames below fixed openings and on small dark hex boards, and its best response played
against the policy by Monte Carlo."""

import numpy as np
import pyspiel
import pytest

from psro.errors import PolicyError
from psro.kernels import kernel_for
from psro.kernels.asking import batch_probs
from psro.kernels.base import KernelError
from psro.kernels.exact import exact_exploitability
from psro.kernels.placement import PlacementRules, tries
from psro.kernels.placement_exact import placement_exploitability

PTTT = "phantom_ttt(obstype=reveal-nothing,gameversion={})"
DH = "dark_hex(obstype=reveal-nothing,gameversion={},num_rows={},num_cols={})"
SUBGAMES = [  # (game, opening): small enough for the walk of pyspiel states below
    (PTTT.format("classical"), (0, 1, 7, 6, 8, 4, 4)),
    (PTTT.format("abrupt"), (7, 5, 4, 2, 2, 0, 0)),
    (DH.format("cdh", 3, 3), (0, 1, 7, 6, 8, 4, 4)),
    (DH.format("adh", 3, 3), (7, 5, 4, 2, 2, 0, 0)),
    (DH.format("cdh", 2, 2), ()),
    (DH.format("adh", 2, 2), ()),
]


class HashedPolicy:
    """A policy that is a fixed function of the information-state tensor: action weights
    from a seeded projection of the tensor, renormalised over the legal actions (read by the
    kernel and by the walk below alike)."""

    def __init__(self, size: int, seed: int, sharp: float = 3.0):
        rng = np.random.default_rng(seed)
        self.proj = rng.normal(size=(size, 9))
        self.sharp = sharp

    def action_probs(self, vg, idx, player, obs, mask):
        logits = self.sharp * np.sin(np.asarray(obs, dtype=float) @ self.proj[:, :mask.shape[1]])
        weights = np.where(mask, np.exp(logits), 0.0)
        return weights / weights.sum(axis=1, keepdims=True)

    def at(self, state, player):
        obs = np.array([state.information_state_tensor(player)])
        legal = np.zeros((1, state.num_distinct_actions()), dtype=bool)
        legal[0, state.legal_actions()] = True
        return self.action_probs(None, None, player, obs, legal)[0]


def _play(game, opening):
    state = game.new_initial_state()
    for a in opening:
        state.apply_action(a)
    return state


class _Responder:
    """OpenSpiel's recursive best response of player ``b`` against the mixture ``seat`` over
    pyspiel states: a member's weight times its reach is carried as a vector, so that a
    mixture is the sequence-form mixture; information sets keyed by pyspiel's tensors."""

    def __init__(self, b, seat):
        self.b = b
        self.members, weights = zip(*seat, strict=True)
        self.weights = np.array(weights, dtype=float)
        self.infosets, self.memo = {}, {}

    def key(self, state):
        return bytes(np.array(state.information_state_tensor(self.b), dtype=np.float32))

    def steps(self, state, w):
        p = state.current_player()
        if p == self.b:
            return [(state.child(a), w) for a in state.legal_actions()]
        probs = [m.at(state, p) for m in self.members]
        return [(state.child(a), w * np.array([q[a] for q in probs]))
                for a in state.legal_actions()]

    def collect(self, state, w):
        if state.is_terminal():
            return
        if state.current_player() == self.b:
            self.infosets.setdefault(self.key(state), []).append((state, w))
        for child, cw in self.steps(state, w):
            self.collect(child, cw)

    def value(self, state, w):
        if state.is_terminal():
            return state.returns()[self.b] * w.sum()
        if state.current_player() == self.b:
            return self.value(state.child(self.best(state)), w)
        return sum(self.value(child, cw) for child, cw in self.steps(state, w))

    def best(self, state):
        key = self.key(state)
        if key not in self.memo:
            actions = state.legal_actions()
            totals = [sum(self.value(h.child(a), w) for h, w in self.infosets[key])
                      for a in actions]
            self.memo[key] = actions[int(np.argmax(totals))]
        return self.memo[key]

    def respond(self, root):
        self.collect(root, self.weights)
        return self.value(root, self.weights)


def _walk_best_responses(game, opening, seats):
    """Per player the best-response value and the policy's value below ``opening``."""
    root = _play(game, opening)
    best = [_Responder(b, seats[1 - b]).respond(root) for b in range(2)]
    v0 = _policy_value(root, seats)
    return np.array(best), np.array([v0, -v0])


def _policy_value(state, seats, reach=None):
    """Player 0's value of the mixtures ``seats``: each player's member reaches carried as a
    vector, so that a mixture is the sequence-form mixture."""
    if reach is None:
        reach = [np.array([w for _, w in seat], dtype=float) for seat in seats]
    if state.is_terminal():
        return state.returns()[0] * reach[0].sum() * reach[1].sum()
    p = state.current_player()
    probs = [m.at(state, p) for m, _ in seats[p]]
    total = 0.0
    for a in state.legal_actions():
        step = list(reach)
        step[p] = reach[p] * np.array([q[a] for q in probs])
        total += _policy_value(state.child(a), seats, step)
    return total


@pytest.mark.parametrize("spec,opening", SUBGAMES)
def test_best_responses_equal_a_walk_of_pyspiel_states(spec, opening):
    game = pyspiel.load_game(spec)
    size = game.information_state_tensor_size()
    seats = [[(HashedPolicy(size, 1), 1.0)], [(HashedPolicy(size, 2), 1.0)]]
    result = placement_exploitability(game, seats, batch_probs, opening)
    best, values = _walk_best_responses(game, opening, seats)
    np.testing.assert_allclose(result.best_values, best, atol=1e-9)
    np.testing.assert_allclose(result.values, values, atol=1e-9)
    assert result.nash_conv == pytest.approx(sum(best - values), abs=1e-9)


@pytest.mark.parametrize("spec,opening", SUBGAMES[:3])
def test_a_mixture_is_its_members_sequence_form_mixture(spec, opening):
    game = pyspiel.load_game(spec)
    size = game.information_state_tensor_size()
    seats = [[(HashedPolicy(size, 1), 0.3), (HashedPolicy(size, 3, 6.0), 0.7)],
             [(HashedPolicy(size, 2), 0.6), (HashedPolicy(size, 4, 6.0), 0.4)]]
    result = placement_exploitability(game, seats, batch_probs, opening)
    best, values = _walk_best_responses(game, opening, seats)
    np.testing.assert_allclose(result.best_values, best, atol=1e-9)
    np.testing.assert_allclose(result.values, values, atol=1e-9)
    alone = [placement_exploitability(game, [[(seats[0][i][0], 1.0)], [(seats[1][j][0], 1.0)]],
                                      batch_probs, opening).values[0]
             for i in range(2) for j in range(2)]
    weights = [0.3 * 0.6, 0.3 * 0.4, 0.7 * 0.6, 0.7 * 0.4]  # values are bilinear
    assert result.values[0] == pytest.approx(np.dot(weights, alone), abs=1e-12)


def _node_of(trie, moves):
    """The trie node reached by the own moves ``moves`` (2 * cell + outcome) below the
    trie's prefix, found by its children masks."""
    node = 0
    for m in moves[len(trie.prefix):]:
        mask = int(trie.childmask[node])
        assert mask >> m & 1
        node = int(trie.childbase[node]) + bin(mask & ((1 << m) - 1)).count("1")
    return node


def _own_moves(state, player, rules):
    """A player's moves (2 * cell + outcome) read from pyspiel: its actions in the history,
    and whether each placed its stone (its view of the cell after the action)."""
    moves, replay = [], state.get_game().new_initial_state()
    own = rules.view_index(player)[:, 1]
    for action in state.history():
        mover = replay.current_player()
        replay.apply_action(action)
        if mover == player:
            placed = replay.information_state_tensor(player)[own[action]] == 1.0
            moves.append(2 * action + (0 if placed else 1))
    return moves


@pytest.mark.parametrize("spec,opening", SUBGAMES)
def test_rules_equal_pyspiels_on_random_histories(spec, opening):
    game = pyspiel.load_game(spec)
    rules = PlacementRules.of(game)
    both = tries(rules, opening)
    rng = np.random.default_rng(11)
    seen = [set(), set()]
    for _ in range(150):
        state = _play(game, opening)
        while not state.is_terminal():
            p = state.current_player()
            node = _node_of(both[p], _own_moves(state, p, rules))
            seen[p].add(node)
            legal = both[p].legal_mask(rules.cells, node, node + 1)[0]
            assert np.flatnonzero(legal).tolist() == state.legal_actions()
            tensor = both[p].tensors(rules, p, node, node + 1)[0]
            assert tensor.tolist() == state.information_state_tensor(p)
            if rules.game_name == "phantom_ttt":
                path = both[p].paths(node, node + 1)
                assert rules.info_strings(p, path)[0] == state.information_state_string(p)
            state.apply_action(int(rng.choice(state.legal_actions())))
    assert all(seen)  # every history met decisions of both players


def test_information_sets_are_those_the_iig_rl_benchmark_counts():
    # exp-a-spiel's NUM_INFOS_PL1 and NUM_INFOS_PL2 for classical dark hex 3 (its README)
    game = pyspiel.load_game(DH.format("cdh", 3, 3))
    both = tries(PlacementRules.of(game))
    assert (both[0].nodes, both[1].nodes) == (3720850, 2352067)


def test_the_best_response_achieves_its_value_in_play():
    spec, opening = SUBGAMES[0]
    game = pyspiel.load_game(spec)
    rules = PlacementRules.of(game)
    policy = HashedPolicy(game.information_state_tensor_size(), 5)
    result = placement_exploitability(game, [[(policy, 1.0)], [(policy, 1.0)]], batch_probs,
                                      opening)
    both = tries(rules, opening)
    rng = np.random.default_rng(3)
    for b in range(2):
        returns = []
        for _ in range(3000):
            state = _play(game, opening)
            while not state.is_terminal():
                p = state.current_player()
                if p == b:
                    node = _node_of(both[b], _own_moves(state, b, rules))
                    state.apply_action(int(result.best_actions[b][node]))
                else:
                    probs = policy.at(state, p)
                    state.apply_action(int(rng.choice(len(probs), p=probs)))
            returns.append(state.returns()[b])
        mean, err = np.mean(returns), np.std(returns) / np.sqrt(len(returns))
        assert abs(mean - result.best_values[b]) < 4 * err + 1e-9


def test_variants_the_kernel_does_not_implement_are_refused():
    for spec in ["phantom_ttt(obstype=reveal-numturns)", "dark_hex(board_size=4)",
                 "dark_hex(obstype=reveal-numturns)"]:
        game = pyspiel.load_game(spec)
        assert kernel_for(game) is None
        with pytest.raises(KernelError):
            exact_exploitability(game, [[(None, 1.0)], [(None, 1.0)]])
    game = pyspiel.load_game(PTTT.format("classical"))
    with pytest.raises(KernelError, match="not legal"):
        PlacementRules.of(game).replay((4, 4, 4))


def test_dark_hex_policies_keyed_by_strings_are_refused_with_the_reason():
    game = pyspiel.load_game(DH.format("cdh", 2, 2))
    with pytest.raises(PolicyError, match="number of moves"):
        exact_exploitability(game, [[({}, 1.0)], [({}, 1.0)]])


def test_a_network_for_another_game_is_refused_before_the_walk():
    import torch

    game = pyspiel.load_game(DH.format("cdh", 2, 2))
    other = torch.nn.Linear(108, 9)  # phantom tic-tac-toe's tensor
    with pytest.raises(PolicyError, match="shape"):
        exact_exploitability(game, [[(other, 1.0)], [(other, 1.0)]])


def test_phantom_ttt_policies_keyed_by_strings_are_read():
    spec, opening = SUBGAMES[0]
    game = pyspiel.load_game(spec)
    rules = PlacementRules.of(game)
    both = tries(rules, opening)
    policy = HashedPolicy(game.information_state_tensor_size(), 8)
    mapping = {}
    for p in range(2):
        keys = rules.info_strings(p, both[p].paths(0, both[p].nodes))
        probs = policy.action_probs(None, None, p, both[p].tensors(rules, p, 0, both[p].nodes),
                                    both[p].legal_mask(9, 0, both[p].nodes))
        mapping.update({k: {a: float(q) for a, q in enumerate(row) if q > 0}
                        for k, row in zip(keys, probs, strict=True)})
    by_strings = placement_exploitability(game, [[(mapping, 1.0)]] * 2, batch_probs, opening)
    by_tensors = placement_exploitability(game, [[(policy, 1.0)]] * 2, batch_probs, opening)
    np.testing.assert_allclose(by_strings.best_values, by_tensors.best_values, atol=1e-12)
    del mapping[next(iter(mapping))]
    with pytest.raises(PolicyError, match="no entry"):
        placement_exploitability(game, [[(mapping, 1.0)]] * 2, batch_probs, opening)


def test_psro_exploitability_measures_dark_hex_by_the_kernel():
    import torch

    import psro

    spec = DH.format("cdh", 2, 2)
    torch.manual_seed(0)
    module = torch.nn.Linear(pyspiel.load_game(spec).information_state_tensor_size(), 4)
    result = psro.exploitability(spec, module, max_nodes=100)  # too large to walk: the kernel
    assert result.kind == "exact" and result.kernel is not None
    game = pyspiel.load_game(spec)
    alone = exact_exploitability(game, [[(module, 1.0)], [(module, 1.0)]])
    assert result.exploitability == pytest.approx(alone.exploitability, abs=1e-12)


@pytest.mark.parametrize("spec,opening", [SUBGAMES[0], SUBGAMES[1], SUBGAMES[2], SUBGAMES[5]])
def test_head_to_head_values_equal_a_walk_of_pyspiel_states(spec, opening):
    """Two different mixtures played against each other in both seats: the kernel's values
    from one walk of B's pair are those of a walk of pyspiel states of each seating."""
    from psro.kernels.exact import exact_cross_values
    from psro.kernels.placement_exact import placement_cross_values, placement_sums

    game = pyspiel.load_game(spec)
    size = game.information_state_tensor_size()
    a = [[(HashedPolicy(size, 1), 0.3), (HashedPolicy(size, 3, 6.0), 0.7)],
         [(HashedPolicy(size, 2), 1.0)]]
    b = [[(HashedPolicy(size, 5), 1.0)],
         [(HashedPolicy(size, 6, 0.5), 0.5), (HashedPolicy(size, 7, 6.0), 0.5)]]
    held_a, held_b = (placement_sums(game, s, batch_probs, opening) for s in (a, b))
    (first, second), = placement_cross_values(held_b, [held_a])
    root = _play(game, opening)
    assert first == pytest.approx(_policy_value(root, [a[0], b[1]]), abs=1e-9)
    assert second == pytest.approx(-_policy_value(root, [b[0], a[1]]), abs=1e-9)
    if not opening:  # the driver, on a whole game
        assert exact_cross_values(game, held_b, [held_a]) == [(first, second)]
