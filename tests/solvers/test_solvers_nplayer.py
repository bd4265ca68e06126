"""Iterative solvers, alpha-rank, correlated equilibria, heuristics, ratings and metrics."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import solvers
from solvers.metrics import nash_conv

RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)
BIASED_RPS = np.array([[0, -1, 2], [1, 0, -3], [-2, 3, 0]], float)  # Nash (1/2, 1/3, 1/6)
CHICKEN = [np.array([[0, 7], [2, 6]], float), np.array([[0, 2], [7, 6]], float)]


def test_metrics_known_values():
    # Pure rock against uniform: each player can gain nothing / 1.
    uniform = np.full(3, 1 / 3)
    rock = np.array([1.0, 0, 0])
    gains = solvers.deviation_gains(RPS, [rock, uniform])
    np.testing.assert_allclose(gains, [0.0, 1.0])
    assert solvers.nash_conv(RPS, [rock, rock]) == pytest.approx(2.0)
    assert solvers.exploitability(RPS, [rock, rock]) == pytest.approx(1.0)
    np.testing.assert_allclose(solvers.expected_payoffs(CHICKEN, [[0, 1], [0, 1]]), [6, 6])


def test_three_player_metrics():
    rng = np.random.default_rng(0)
    game = [rng.standard_normal((2, 3, 4)) for _ in range(3)]
    mix = [np.eye(2)[0], np.eye(3)[1], np.eye(4)[2]]
    gains = solvers.deviation_gains(game, mix)
    for p in range(3):
        line = np.moveaxis(game[p], p, 0)[(slice(None),) + tuple(
            [0, 1, 2][q] for q in range(3) if q != p)]
        assert gains[p] == pytest.approx(line.max() - game[p][0, 1, 2])


@pytest.mark.parametrize("name,tol", [
    ("prd", 0.03), ("replicator", 0.03), ("fictitious_play", 0.05), ("regret_matching", 1e-3),
])
def test_iterative_solvers_on_biased_rps(name, tol):
    mix = solvers.get(name)(BIASED_RPS)
    assert nash_conv(BIASED_RPS, mix) < tol
    np.testing.assert_allclose(mix[0], [1 / 2, 1 / 3, 1 / 6], atol=0.02)


def test_prd_exploration_floor_and_seeded_fictitious_play():
    mix = solvers.projected_replicator_dynamics([[5.0, 5.0], [0.0, 0.0]], iterations=2000,
                                                exploration=0.1)
    assert mix[0].min() >= 0.1 / 2 - 1e-12
    a = solvers.fictitious_play(RPS, iterations=300, seed=4)
    b = solvers.fictitious_play(RPS, iterations=300, seed=4)
    np.testing.assert_array_equal(a[0], b[0])


def test_regret_matching_three_player_approaches_cce():
    # In N-player games regret matching's average play approaches the CCE set; its marginals
    # are not an equilibrium in general, but a dominance-solvable game is solved exactly.
    game = [np.zeros((2, 2, 2)) for _ in range(3)]
    for p in range(3):
        idx = [slice(None)] * 3
        idx[p] = 1
        game[p][tuple(idx)] = 1.0  # strategy 1 strictly dominates for everyone
    mix = solvers.regret_matching(game, iterations=500)
    assert all(m[1] > 0.99 for m in mix)


def test_alpharank_matches_openspiel():
    from open_spiel.python.egt import alpharank as os_alpharank

    rng = np.random.default_rng(5)
    A, B = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    ours = solvers.alpharank([A, B], alpha=10, population_size=20).stationary.ravel()
    theirs = os_alpharank.compute([A, B], alpha=10, m=20, verbose=False)[2]
    np.testing.assert_allclose(ours, theirs, atol=1e-8)


def test_alpharank_known_rankings():
    pd = [np.array([[3, 0], [5, 1]], float), np.array([[3, 5], [0, 1]], float)]
    result = solvers.alpharank(pd)
    assert result.stationary[1, 1] > 0.999  # mutual defection is the sink
    np.testing.assert_allclose(solvers.alpharank(RPS).marginals[0], [1 / 3] * 3, atol=1e-9)
    rng = np.random.default_rng(1)
    three = [rng.standard_normal((3, 3, 3)) for _ in range(3)]
    r = solvers.alpharank(three)
    assert r.stationary.shape == (3, 3, 3)


def test_chicken_correlated_equilibria():
    welfare = solvers.correlated_equilibrium(CHICKEN, objective="welfare")
    # Aumann's chicken: the welfare-maximising CE is 1/4, 1/4 on the asymmetric outcomes and
    # 1/2 on (swerve, swerve), worth 10.5 in total.
    np.testing.assert_allclose(welfare.joint, [[0, 0.25], [0.25, 0.5]], atol=1e-9)
    for objective in ["entropy", "gini"]:
        ce = solvers.correlated_equilibrium(CHICKEN, objective=objective)
        gains = solvers.correlated_gains(CHICKEN, ce.joint)
        assert gains.max() <= solvers.CE_RTOL * 7
        assert ce.joint.min() > 0.1  # interior: max entropy / Gini spreads the mass


def test_max_entropy_beats_other_ce_in_entropy():
    def entropy(p):
        p = p[p > 0]
        return -(p * np.log(p)).sum()

    ent = solvers.correlated_equilibrium(CHICKEN, "entropy").joint
    gini = solvers.correlated_equilibrium(CHICKEN, "gini").joint
    welfare = solvers.correlated_equilibrium(CHICKEN, "welfare").joint
    assert entropy(ent.ravel()) >= entropy(gini.ravel()) - 1e-9
    assert entropy(ent.ravel()) >= entropy(welfare.ravel()) - 1e-9
    assert (gini**2).sum() <= (ent**2).sum() + 1e-9


def _brute_force_gains(game, joint, coarse: bool) -> float:
    """Largest gain of any deviation from the joint distribution, by explicit loops: a player
    swaps every recommendation (CCE: ignores it) for a fixed action."""
    import itertools

    shape = joint.shape
    best = 0.0
    for p, payoff in enumerate(game):
        recommended = [None] if coarse else range(shape[p])
        for r in recommended:
            for deviation in range(shape[p]):
                gain = 0.0
                for profile in itertools.product(*(range(k) for k in shape)):
                    if r is not None and profile[p] != r:
                        continue
                    moved = list(profile)
                    moved[p] = deviation
                    gain += joint[profile] * (payoff[tuple(moved)] - payoff[profile])
                best = max(best, gain)
    return best


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 3), st.integers(2, 3), st.integers(0, 2**31 - 1),
       st.sampled_from(["entropy", "gini", "welfare"]), st.booleans())
def test_ce_cce_constraints_hold(n_players, n_actions, seed, objective, coarse):
    rng = np.random.default_rng(seed)
    shape = (n_actions,) * n_players
    game = [rng.standard_normal(shape) for _ in range(n_players)]
    solve = solvers.coarse_correlated_equilibrium if coarse else solvers.correlated_equilibrium
    result = solve(game, objective=objective)
    gains = _brute_force_gains(game, result.joint, coarse)  # written here, not the library's
    assert gains <= solvers.CE_RTOL * max(np.abs(g).max() for g in game) + 1e-12
    if not coarse:  # every CE is a CCE
        assert solvers.correlated_gains(game, result.joint, coarse=True).max() <= 1e-7


def test_heuristics():
    game = [np.zeros((4, 3)), np.zeros((4, 3))]
    assert [m.tolist() for m in solvers.uniform(game)] == [[0.25] * 4, [1 / 3] * 3]
    assert [m.tolist() for m in solvers.latest(game)] == [[0, 0, 0, 1], [0, 0, 1]]
    mix = solvers.latest_mix(game, p=0.8)
    np.testing.assert_allclose(mix[0], [0.2 / 3] * 3 + [0.8])
    np.testing.assert_allclose(mix[1], [0.1, 0.1, 0.8])
    assert solvers.latest_mix([np.zeros((1, 1))] * 2)[0].tolist() == [1.0]


def test_pfsp_weights_opponents_the_learner_loses_to():
    # Player 1's newest member is scissors: it loses to rock, beats paper, ties scissors.
    mix = solvers.pfsp(RPS, weighting="hard", exponent=1.0)
    np.testing.assert_allclose(mix[0], [1.0, 0.0, 0.5] / np.array(1.5))
    variance = solvers.pfsp(RPS, weighting="variance")
    np.testing.assert_allclose(variance[0], [0, 0, 1])


def test_rectified_drops_beaten_opponents():
    mix = solvers.rectified(RPS)
    np.testing.assert_allclose(mix[0], [0.5, 0.0, 0.5])  # paper is beaten by the newest


# Each built-in meta-solver's answer on rock-paper-scissors, by hand: the equilibrium solvers
# find the uniform Nash (iterative ones to within their tolerance); the heuristics see
# player 1's newest member, scissors (last index).
RPS_ANSWERS = {
    "nash": ([1 / 3] * 3, 1e-9), "uniform": ([1 / 3] * 3, 0), "latest": ([0, 0, 1], 0),
    "latest_mix": ([0.1, 0.1, 0.8], 1e-12), "pfsp": ([0.8, 0.0, 0.2], 1e-12),
    "rectified": ([0.5, 0.0, 0.5], 1e-9), "prd": ([1 / 3] * 3, 0.02),
    "replicator": ([1 / 3] * 3, 0.02), "fictitious_play": ([1 / 3] * 3, 0.02),
    "regret_matching": ([1 / 3] * 3, 0.02), "alpharank": ([1 / 3] * 3, 1e-9),
    "ce": ([1 / 3] * 3, 1e-6), "cce": ([1 / 3] * 3, 1e-6),
}


def test_registry_answers_on_rock_paper_scissors():
    names = [n for n in solvers.names() if not n.startswith("my_")]  # "my_*": registered by
    assert sorted(names) == sorted(RPS_ANSWERS)  # the README's examples, which a test runs
    for name in names:
        expected, tol = RPS_ANSWERS[name]
        np.testing.assert_allclose(solvers.get(name)(RPS)[0], expected, atol=tol,
                                   err_msg=name)


def test_registry_errors():
    with pytest.raises(ValueError, match="accepted: nash, uniform"):
        solvers.get("nahs")
    with pytest.raises(ValueError, match="itrations.*accepted: iterations"):
        solvers.get("prd", itrations=10)
    with pytest.raises(ValueError, match="p must be in"):
        solvers.get("latest_mix", p=1.5)
    with pytest.raises(ValueError, match="objective must be one of"):
        solvers.get("ce", objective="max_entropy")
    with pytest.raises(ValueError, match="two-player"):
        solvers.get("nash")([np.zeros((2, 2, 2))] * 3)


def test_elo_recovers_known_ratings():
    true = np.array([0.0, 100.0, 250.0, -80.0])
    W = 1 / (1 + 10 ** ((true[None, :] - true[:, None]) / 400))
    np.testing.assert_allclose(solvers.elo_ratings(W), true - true.mean(), atol=1e-4)
    payoff = 2 * W - 1  # zero-sum payoffs in [-1, 1]
    np.testing.assert_allclose(np.argsort(solvers.elo_ratings(payoff, kind="payoff")),
                               np.argsort(true))


def test_elo_with_unobserved_pairs():
    true = np.array([0.0, 200.0, 100.0, -100.0])
    W = 1 / (1 + 10 ** ((true[None, :] - true[:, None]) / 400))
    bipartite = np.zeros((4, 4), dtype=bool)
    bipartite[:2, 2:] = bipartite[2:, :2] = True  # only cross-group results are known
    W_partial = np.where(bipartite, W, 0.5)
    np.testing.assert_allclose(solvers.elo_ratings(W_partial, observed=bipartite),
                               true - true.mean(), atol=1e-3)


def test_nash_averaging_invariant_to_copies():
    base = solvers.nash_averaging(RPS)
    np.testing.assert_allclose(base.row, [1 / 3] * 3, atol=1e-6)
    copied = np.array([[0, -1, 1, 0], [1, 0, -1, 1], [-1, 1, 0, -1], [0, -1, 1, 0]], float)
    avg = solvers.nash_averaging(copied)
    np.testing.assert_allclose(avg.row, [1 / 6, 1 / 3, 1 / 3, 1 / 6], atol=1e-5)
    np.testing.assert_allclose(avg.row_ratings, 0, atol=1e-6)
    # A transitive population: the dominant agent gets all the Nash mass and the top rating.
    trans = np.array([[0, 1, 1], [-1, 0, 1], [-1, -1, 0]], float)
    t = solvers.nash_averaging(trans)
    np.testing.assert_allclose(t.row, [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(t.row_ratings, [0, -1, -1], atol=1e-6)


def _alpharank_reference(game, alpha, m, digits=40):
    """alpha-rank's stationary distribution in 40-digit arithmetic (mpmath): the Moran chain
    built from its definition, solved by GTH state reduction. Written here, independent of
    solvers.alpharank."""
    import itertools

    import mpmath

    mpmath.mp.dps = digits
    shape = game[0].shape
    profiles = list(itertools.product(*(range(n) for n in shape)))
    where = {s: i for i, s in enumerate(profiles)}
    eta = mpmath.mpf(1) / sum(n - 1 for n in shape)
    size = len(profiles)
    P = [[mpmath.mpf(0)] * size for _ in range(size)]
    for i, s in enumerate(profiles):
        for k, n_k in enumerate(shape):
            for t in range(n_k):
                if t == s[k]:
                    continue
                target = s[:k] + (t,) + s[k + 1:]
                f = mpmath.mpf(float(game[k][target])) - mpmath.mpf(float(game[k][s]))
                rho = mpmath.mpf(1) / m if f == 0 else \
                    (1 - mpmath.exp(-alpha * f)) / (1 - mpmath.exp(-alpha * m * f))
                P[i][where[target]] = eta * rho
    for k in range(size - 1, 0, -1):
        out = sum(P[k][:k])
        for i in range(k):
            P[i][k] /= out
        for i in range(k):
            for j in range(k):
                P[i][j] += P[i][k] * P[k][j]
    pi = [mpmath.mpf(1)]
    for k in range(1, size):
        pi.append(sum(pi[i] * P[i][k] for i in range(k)))
    total = sum(pi)
    return np.array([float(p / total) for p in pi]).reshape(shape)


# Games where a uniform perturbation of 1e-10 (the former default) moved the stationary
# distribution by 0.36 to 0.78, and two where it did not.
@pytest.mark.parametrize("shape,alpha,seed", [
    ((3, 3), 5.0, 3), ((3, 3), 100.0, 9), ((2, 2, 2), 100.0, 6), ((4, 4), 5.0, 6),
    ((3, 3, 2), 100.0, 11), ((2, 2, 2), 5.0, 2), ((4, 3), 0.5, 4),
])
def test_alpharank_matches_a_40_digit_reference(shape, alpha, seed):
    rng = np.random.default_rng(seed)
    game = [rng.standard_normal(shape) for _ in shape]
    reference = _alpharank_reference(game, alpha, 50)
    ours = solvers.alpharank(game, alpha=alpha).stationary
    np.testing.assert_allclose(ours, reference, rtol=1e-9, atol=1e-12)


def test_joint_solvers_return_the_correlated_distribution_or_the_product():
    # Chicken's welfare-maximising CE is 1/4 on each "dare/chicken" cell and 1/2 on
    # (chicken, chicken): welfare 10.5 against 9 for any Nash equilibrium.
    joint = solvers.get_joint("ce", objective="welfare")(CHICKEN)
    np.testing.assert_allclose(joint, [[0, 0.25], [0.25, 0.5]], atol=1e-8)
    np.testing.assert_allclose(solvers.get("ce", objective="welfare")(CHICKEN)[0],
                               [0.25, 0.75], atol=1e-8)
    # Any other solver: the product of its mixtures (RPS: uniform 3 x 3).
    np.testing.assert_allclose(solvers.get_joint("nash")(RPS), np.full((3, 3), 1 / 9),
                               atol=1e-9)
    three = [np.arange(8.0).reshape(2, 2, 2) * (p + 1) for p in range(3)]
    product = solvers.product_joint([np.array([0.5, 0.5]), np.array([1.0, 0]),
                                     np.array([0.25, 0.75])])
    assert product.shape == (2, 2, 2) and product[1, 0, 1] == 0.375
    assert [m.tolist() for m in solvers.marginals(product)] == [[0.5, 0.5], [1, 0],
                                                                [0.25, 0.75]]
    assert solvers.get_joint("cce")(three).shape == (2, 2, 2)
    with pytest.raises(solvers.OptionError, match="accepted: objective"):
        solvers.get_joint("cce", method="x")
    with pytest.raises(solvers.OptionError, match="unknown meta-solver 'nope'"):
        solvers.get_joint("nope")


@pytest.mark.parametrize("joint, text", [
    (np.array([[np.nan, 0.0], [0.0, 1.0]]), "joint contains NaN or infinite entries"),
    (np.array([[0.5, 0.5], [0.5, 0.5]]), "joint sums to 2, not 1"),
    (np.array([[1.5, -0.5], [0.0, 0.0]]), "joint has negative entries"),
    (np.array([["a", "b"], ["c", "d"]]), "joint is not a rectangular array of numbers"),
    (np.ones((2, 2), complex) / 4, "joint has complex entries"),
    (np.float64(1.0), "joint must be an array with one axis per player"),
])
def test_a_joint_that_is_not_a_distribution_is_refused(joint, text):
    """A NaN joint gave NaN gains and NaN marginals; a joint summing to 2 marginals summing to
    2; complex entries a ComplexWarning and their real parts."""
    with pytest.raises(solvers.PayoffError, match=text):
        solvers.marginals(joint)
    if np.ndim(joint) == 2:
        with pytest.raises(solvers.PayoffError, match=text):
            solvers.correlated_gains(CHICKEN, joint)
    with pytest.raises(solvers.PayoffError, match="joint has shape"):
        solvers.correlated_gains(CHICKEN, np.full((3, 3), 1 / 9))


@pytest.mark.parametrize("mixtures, text", [
    ([np.array([0.5, 0.6])], r"mixtures\[0\] sums to 1.1, not 1"),
    ([np.array([0.5, 0.5]), np.array([np.nan, 1.0])], r"mixtures\[1\] contains NaN"),
    ([np.array([[0.5, 0.5]])], r"mixtures\[0\] must be a 1-D array"),
    ([], "a non-empty list with one 1-D mixture per player"),
    (np.array([0.5, 0.5]), "a non-empty list with one 1-D mixture per player"),
])
def test_product_joint_refuses_what_is_not_a_list_of_distributions(mixtures, text):
    with pytest.raises(solvers.PayoffError, match=text):
        solvers.product_joint(mixtures)


def test_a_registered_joint_solver_that_returns_no_distribution_is_caught():
    solvers.register_joint("half_test_only", lambda: lambda payoffs: np.full((2, 2), 0.5))
    try:
        with pytest.raises(solvers.PayoffError, match="joint sums to 2, not 1"):
            solvers.get("half_test_only")(CHICKEN)
    finally:
        from solvers import registry

        for table in (registry._FACTORIES, registry._JOINT_FACTORIES, registry.DESCRIPTIONS):
            table.pop("half_test_only", None)


@pytest.mark.parametrize("name, options, text", [
    ("alpharank", {"alpha": -5}, "alpha must be in (0, 1e+12]; got -5"),
    ("alpharank", {"perturbation": 0.5}, "perturbation must be in [0, 0.001]; got 0.5"),
    ("prd", {"exploration": 2}, "exploration must be in [0, 1]; got 2"),
])
def test_out_of_range_options_name_the_accepted_range(name, options, text):
    with pytest.raises(solvers.OptionError) as raised:
        solvers.get(name, **options)
    assert str(raised.value) == text


def test_register_joint_gives_the_joint_and_its_marginals():
    def diagonal(weight: float = 0.5):
        def solve(payoffs):
            joint = np.zeros(np.shape(payoffs[0]))
            joint[0, 0], joint[1, 1] = weight, 1 - weight
            return joint
        return solve

    solvers.register_joint("test_diagonal", diagonal, "a fixed correlated device")
    try:
        assert solvers.options("test_diagonal") == {"weight": 0.5}
        assert "test_diagonal" in solvers.joint_names()
        np.testing.assert_allclose(solvers.get_joint("test_diagonal", weight=0.2)(CHICKEN),
                                   [[0.2, 0], [0, 0.8]])
        np.testing.assert_allclose(solvers.get("test_diagonal")(CHICKEN)[1], [0.5, 0.5])
        with pytest.raises(solvers.OptionError, match="already registered"):
            solvers.register_joint("test_diagonal", diagonal)
    finally:
        from solvers import registry

        for table in (registry._FACTORIES, registry._JOINT_FACTORIES, registry.DESCRIPTIONS):
            table.pop("test_diagonal", None)
