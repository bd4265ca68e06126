"""Worked examples with known answers for the exact two-player solvers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import solvers
from solvers.metrics import nash_conv

RPS = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)
MATCHING_PENNIES = np.array([[1, -1], [-1, 1]], float)


def lp_value(A: np.ndarray) -> float:
    """The value of the zero-sum game A by an LP written here, independent of the solver's
    own formulation: maximise v subject to x^T A >= v, x a distribution (HiGHS)."""
    from scipy.optimize import linprog

    scale = np.abs(A).max() or 1.0  # HiGHS's tolerances are absolute: solve at scale 1
    A = A / scale
    n, m = A.shape
    c = np.zeros(n + 1)
    c[-1] = -1.0  # maximise v
    A_ub = np.hstack([-A.T, np.ones((m, 1))])  # v - x^T A[:, j] <= 0
    A_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    result = linprog(c, A_ub=A_ub, b_ub=np.zeros(m), A_eq=A_eq, b_eq=[1.0],
                     bounds=[(0, None)] * n + [(None, None)], method="highs",
                     options={"primal_feasibility_tolerance": 1e-10,
                              "dual_feasibility_tolerance": 1e-10})
    assert result.status == 0
    return float(result.x[-1]) * scale


def test_rock_paper_scissors_value_and_mixtures():
    x, y, value = solvers.zero_sum_nash(RPS)
    np.testing.assert_allclose(x, [1 / 3] * 3, atol=1e-12)
    np.testing.assert_allclose(y, [1 / 3] * 3, atol=1e-12)
    assert abs(value) < 1e-12


def test_biased_rps_known_equilibrium():
    # Biased RPS (paper beats rock by 2, rock beats scissors by 2... here: weights 1, 2, 3):
    # A = [[0, -1, 2], [1, 0, -3]... ] solved by hand below via the indifference equations.
    A = np.array([[0, -1, 2], [1, 0, -3], [-2, 3, 0]], float)
    x, y, value = solvers.zero_sum_nash(A)
    # Indifference: the unique equilibrium is (1/2, 1/3, 1/6) for both, value 0.
    np.testing.assert_allclose(x, [1 / 2, 1 / 3, 1 / 6], atol=1e-10)
    np.testing.assert_allclose(y, [1 / 2, 1 / 3, 1 / 6], atol=1e-10)
    assert abs(value) < 1e-12


def test_zero_sum_edge_shapes():
    x, y, v = solvers.zero_sum_nash([[1.0, 2.0, 3.0]])
    assert x.tolist() == [1.0] and y[0] == pytest.approx(1.0) and v == pytest.approx(1.0)
    x, y, v = solvers.zero_sum_nash([[1.0], [5.0], [2.0]])
    assert x[1] == pytest.approx(1.0) and v == pytest.approx(5.0)
    x, y, v = solvers.zero_sum_nash(np.full((3, 4), 7.0))
    assert v == pytest.approx(7.0)


@pytest.mark.parametrize("scale", [1e-8, 1.0, 1e9])
def test_zero_sum_badly_scaled(scale):
    rng = np.random.default_rng(3)
    A = rng.standard_normal((40, 30)) * scale
    x, y, v = solvers.zero_sum_nash(A)
    assert v == pytest.approx(lp_value(A), rel=1e-7, abs=1e-9 * scale)
    assert v == pytest.approx(x @ A @ y)


def test_zero_sum_table_where_constraint_generation_ends_off_is_solved_within_tolerance():
    """A 163 x 163 payoff table of goofspiel 5 (PSRO, exact oracle) on which constraint
    generation ended at NashConv 2.3e-9 > 1e-9 and stopped the run; the value is checked
    against an LP written here (scipy's HiGHS on the textbook maximin formulation)."""
    from conftest import DATA
    from scipy.optimize import linprog

    A = np.load(DATA / "goofspiel5_psro_table_163.npz")["A"]
    x, y, value = solvers.zero_sum_nash(A)
    assert nash_conv([A, -A], [x, y]) <= 1e-9 * np.abs(A).max()
    n, m = A.shape  # max v s.t. x^T A >= v, sum x = 1, x >= 0
    lp = linprog(np.r_[np.zeros(n), -1.0], A_ub=np.c_[-A.T, np.ones(m)], b_ub=np.zeros(m),
                 A_eq=np.r_[np.ones(n), 0.0][None], b_eq=[1.0],
                 bounds=[(0, None)] * n + [(None, None)], method="highs")
    assert value == pytest.approx(-lp.fun, abs=1e-8)


def test_matching_pennies_lemke_howson():
    x, y = solvers.nash([MATCHING_PENNIES, -MATCHING_PENNIES], method="lemke_howson")
    np.testing.assert_allclose(x, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(y, [0.5, 0.5], atol=1e-12)


def test_battle_of_the_sexes_has_three_equilibria():
    A = np.array([[3, 0], [0, 2]], float)
    B = np.array([[2, 0], [0, 3]], float)
    eqs = solvers.equilibria([A, B])
    assert len(eqs) == 3
    mixed = [e for e in eqs if 0 < e[0][0] < 1]
    np.testing.assert_allclose(mixed[0][0], [3 / 5, 2 / 5], atol=1e-12)
    np.testing.assert_allclose(mixed[0][1], [2 / 5, 3 / 5], atol=1e-12)
    assert len(solvers.equilibria([A, B], method="vertex_enumeration")) == 3


def test_prisoners_dilemma_unique_equilibrium_all_methods():
    A = np.array([[3, 0], [5, 1]], float)
    for method in ["auto", "lemke_howson", "support_enumeration", "vertex_enumeration"]:
        x, y = solvers.nash([A, A.T], method=method)
        np.testing.assert_allclose(x, [0, 1], atol=1e-12)
        np.testing.assert_allclose(y, [0, 1], atol=1e-12)


def test_degenerate_game_lemke_howson():
    # von Stengel's degenerate 3x2 example: a continuum of equilibria.
    A = np.array([[3, 3], [2, 5], [0, 6]], float)
    B = np.array([[3, 2], [2, 6], [3, 1]], float)
    for label in range(5):
        x, y = solvers.lemke_howson(A, B, initial_label=label)
        assert nash_conv([A, B], [x, y]) < 1e-12
    assert len(solvers.equilibria([A, B])) == 3


def test_constant_sum_detected_with_tolerance():
    A = np.array([[2.0, 0.5], [0.0, 3.0]])
    B = 5.0 - A + 1e-13  # not exactly constant-sum
    assert solvers.constant_sum([A, B]) == pytest.approx(5.0)
    x, y = solvers.nash([A, B], method="zero_sum")
    # By hand: x1 = 2/3 equalises the columns (value 4/3), y1 = 5/9 equalises the rows.
    np.testing.assert_allclose(x, [2 / 3, 1 / 3], atol=1e-9)
    np.testing.assert_allclose(y, [5 / 9, 4 / 9], atol=1e-9)
    with pytest.raises(ValueError, match="constant-sum"):
        solvers.nash([A, A], method="zero_sum")


def test_methods_agree_where_equilibrium_is_unique():
    rng = np.random.default_rng(7)
    A = rng.standard_normal((6, 6))
    ref_x, ref_y, _ = solvers.zero_sum_nash(A)
    for method in ["lemke_howson", "support_enumeration", "vertex_enumeration"]:
        x, y = solvers.nash([A, -A], method=method)
        np.testing.assert_allclose(x, ref_x, atol=1e-8)
        np.testing.assert_allclose(y, ref_y, atol=1e-8)


@pytest.mark.parametrize("n", [50, 200])
def test_lemke_howson_large_general_sum(n):
    rng = np.random.default_rng(n)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    x, y = solvers.lemke_howson(A, B)  # the raw path: unverified, so this checks the pivoting
    assert nash_conv([A, B], [x, y]) <= solvers.NASH_RTOL * max(np.abs(A).max(), np.abs(B).max())


def test_lemke_howson_large_degenerate():
    rng = np.random.default_rng(1)
    A = rng.integers(0, 3, (60, 60)).astype(float)
    B = rng.integers(0, 3, (60, 60)).astype(float)
    # nash() verifies what it returns and raises SolverError when no label's path meets the
    # tolerance: on this degenerate game it must succeed.
    solvers.nash([A, B], method="lemke_howson")


@pytest.mark.parametrize("method", ["lemke_howson", "support_enumeration",
                                    "vertex_enumeration"])
def test_single_strategy_games(method):
    A, B = np.array([[1.0, 4.0, 2.0]]), np.array([[0.0, 3.0, 5.0]])
    x, y = solvers.nash([A, B], method=method)
    assert x.tolist() == [1.0] and y.tolist() == [0.0, 0.0, 1.0]
    x, y = solvers.nash([A.T, B.T], method=method)
    assert x.tolist() == [0.0, 1.0, 0.0] and y.tolist() == [1.0]
    assert solvers.nash([np.zeros((1, 1)), np.ones((1, 1))], method=method)[0].tolist() == [1.0]


def test_nash_refuses_three_players():
    game = [np.zeros((2, 2, 2))] * 3
    with pytest.raises(ValueError, match="two-player"):
        solvers.nash(game)


finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@settings(max_examples=40, deadline=None)
@given(arrays(float, st.tuples(st.integers(1, 7), st.integers(1, 7)), elements=finite))
def test_zero_sum_property(A):
    x, y, v = solvers.zero_sum_nash(A)
    scale = max(np.abs(A).max(), 1.0)
    assert abs(v - lp_value(A)) <= 1e-8 * scale
    assert abs(v - x @ A @ y) <= 1e-9 * scale


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**31 - 1), st.booleans())
def test_lemke_howson_property(n, m, seed, integer):
    rng = np.random.default_rng(seed)
    if integer:  # small integer payoffs: many degenerate games, where nash() must still
        # find a verified equilibrium (it raises SolverError otherwise)
        A, B = rng.integers(-2, 3, (n, m)).astype(float), rng.integers(-2, 3, (n, m)).astype(float)
        solvers.nash([A, B], method="lemke_howson")
        return
    A, B = rng.standard_normal((n, m)), rng.standard_normal((n, m))  # nondegenerate
    x, y = solvers.lemke_howson(A, B)  # raw path, unverified by the library
    scale = max(np.abs(A).max(), np.abs(B).max())
    assert nash_conv([A, B], [x, y]) <= solvers.NASH_RTOL * scale
    assert (x >= 0).all() and (y >= 0).all()


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 5), st.integers(2, 5), st.integers(0, 2**31 - 1),
       st.sampled_from([1e-12, 1e-9, 1e-3, 1e3, 1e9]), st.floats(-1e3, 1e3))
def test_lemke_howson_is_unchanged_by_rescaling_the_payoffs(n, m, seed, scale, offset):
    """Nash equilibria do not change when a player's payoffs are multiplied by a positive
    number and shifted: Lemke-Howson from the same label follows the same path (it failed on
    games whose payoffs were of order 1e-9)."""
    rng = np.random.default_rng(seed)
    A, B = rng.standard_normal((n, m)), rng.standard_normal((n, m))  # nondegenerate
    x, y = solvers.lemke_howson(A, B)
    shifted = [scale * A + offset * scale, scale * B - offset * scale]
    x_scaled, y_scaled = solvers.lemke_howson(*shifted)
    np.testing.assert_allclose(x_scaled, x, atol=1e-9)
    np.testing.assert_allclose(y_scaled, y, atol=1e-9)
    found = solvers.nash(shifted, method="lemke_howson")
    assert nash_conv(shifted, found) <= solvers.NASH_RTOL * np.abs(shifted).max()


def test_vertex_enumeration_misses_extreme_equilibria_of_degenerate_games():
    """The documented limitation: nashpy's vertex enumeration assumes a non-degenerate game.
    Here the column player's strategy 3 pays the row player 0 everywhere, so (0, 3), (2, 3)
    and (4, 3) are pure (extreme) equilibria; vertex enumeration misses them."""
    A = np.array([[0, 1, 1, 0, 0, 1, 1], [0, 1, 1, 0, 1, 1, 0], [1, 1, 0, 0, 0, 1, 0],
                  [1, 1, 1, 0, 0, 0, 1], [1, 0, 1, 0, 0, 0, 1]], float)
    B = np.array([[1, 0, 1, 1, 0, 0, 0], [0, 1, 0, 0, 0, 0, 1], [0, 1, 1, 1, 1, 1, 1],
                  [0, 1, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 0]], float)
    pure = [(i, j) for i in range(5) for j in range(7)
            if A[i, j] == A[:, j].max() and B[i, j] == B[i, :].max()]
    assert {(0, 3), (2, 3), (4, 3)} <= set(pure)

    def found(method):
        return {(int(np.argmax(x)), int(np.argmax(y)))
                for x, y in solvers.equilibria([A, B], method=method)
                if x.max() > 1 - 1e-9 and y.max() > 1 - 1e-9}

    assert {(0, 3), (2, 3), (4, 3)} <= found("support_enumeration")
    assert not {(0, 3), (2, 3), (4, 3)} & found("vertex_enumeration")
