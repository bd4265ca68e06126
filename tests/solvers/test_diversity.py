"""DPP diversity against its definition: E|Y| = sum over subsets Y of |Y| det(L_Y) / det(L + I),
summed here by brute force over every subset, independently of the solver's eigenvalue formula."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import solvers

pytestmark = pytest.mark.filterwarnings("ignore:divide by zero encountered in det")


def brute_force_cardinality(rows: np.ndarray) -> float:
    """Singular minors are fine: numpy may warn while it computes their determinant 0."""
    kernel = rows @ rows.T
    k = len(rows)
    total = 0.0
    for size in range(1, k + 1):
        for subset in itertools.combinations(range(k), size):
            total += size * np.linalg.det(kernel[np.ix_(subset, subset)])
    return total / np.linalg.det(kernel + np.eye(k))


matrices = st.integers(1, 5).flatmap(lambda k: st.integers(1, 5).flatmap(
    lambda m: arrays(float, (k, m), elements=st.floats(-3, 3, allow_nan=False))))


@settings(max_examples=60, deadline=None)
@given(matrices)
def test_expected_cardinality_matches_the_subset_sum(rows):
    assert solvers.expected_cardinality(rows) == pytest.approx(
        brute_force_cardinality(rows), rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(matrices, st.floats(0.5, 4))
def test_gradient_matches_finite_differences_of_the_subset_sum(rows, scale):
    new = np.linspace(-1, 1, rows.shape[1])
    value, gradient = solvers.cardinality_gradient(rows, new, scale)
    assert solvers.joined_cardinality(rows, new, scale) == value
    assert value == pytest.approx(brute_force_cardinality(np.vstack([rows, new]) / scale),
                                  rel=1e-9, abs=1e-9)
    h = 1e-6
    for j in range(len(new)):
        up, down = new.copy(), new.copy()
        up[j] += h
        down[j] -= h
        numeric = (brute_force_cardinality(np.vstack([rows, up]) / scale)
                   - brute_force_cardinality(np.vstack([rows, down]) / scale)) / (2 * h)
        assert gradient[j] == pytest.approx(numeric, rel=1e-4, abs=1e-6)


def test_known_values():
    # Orthogonal unit rows: L = I, each eigenvalue 1 contributes 1/2.
    assert solvers.expected_cardinality(np.eye(3)) == pytest.approx(1.5)
    # A copy adds less than an orthogonal member: rows (1,0),(1,0) give L eigenvalues 2, 0.
    assert solvers.expected_cardinality(np.array([[1.0, 0], [1, 0]])) == pytest.approx(2 / 3)
    assert solvers.expected_cardinality(np.zeros((0, 4))) == 0.0
    # Scale divides the rows: (2, 0) at scale 2 is the unit row.
    assert solvers.expected_cardinality(np.array([[2.0, 0]]), scale=2) == pytest.approx(0.5)


def test_population_rows_of_each_player():
    a = np.arange(6.0).reshape(2, 3)
    payoffs = [a, -a]
    assert solvers.population_rows(payoffs, 0).tolist() == a.tolist()
    assert solvers.population_rows(payoffs, 1).tolist() == (-a).T.tolist()
    values = solvers.population_diversity(payoffs, scale=5)
    assert values == pytest.approx([brute_force_cardinality(a / 5),
                                    brute_force_cardinality(-a.T / 5)])


@pytest.mark.parametrize("bad, scale, text", [
    (np.zeros(3), 1.0, "2-D"), (np.array([[np.nan]]), 1.0, "finite"),
    (np.ones((2, 2)), 0.0, "positive")])
def test_bad_input_is_refused(bad, scale, text):
    with pytest.raises(solvers.PayoffError, match=text):
        solvers.expected_cardinality(bad, scale)


@pytest.mark.parametrize("bad, scale, text", [
    ([["a", "b"]], 1.0, "not a rectangular array of numbers"),
    ([[1.0, 2.0], [3.0]], 1.0, "not a rectangular array of numbers"),
    (np.ones((2, 2), complex), 1.0, "complex entries"),
    (np.ones((2, 2, 2)), 1.0, "2-D"),
    (np.ones((2, 2)), "2", "scale must be a positive number"),
    (np.ones((2, 2)), True, "scale must be a positive number"),
    (np.full((2, 2), 1e200), 1.0, "too large for their products to be finite; pass scale"),
])
def test_input_numpy_would_fail_on_or_overflow_is_refused_as_payoff_error(bad, scale, text):
    """Each was a ValueError, TypeError or ComplexWarning from numpy, or an overflow warning
    and a NaN result."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(solvers.PayoffError, match=text):
            solvers.expected_cardinality(bad, scale)
        if isinstance(bad, np.ndarray) and bad.ndim == 2:  # as a two-player table
            with pytest.raises(solvers.PayoffError, match=text):
                solvers.population_diversity([bad, bad], scale)


def test_a_new_row_of_another_length_than_the_rows_is_refused_not_reshaped():
    """Rows (2, 3) and a new row of 2 entries: the rows were reshaped to (3, 2) and a value
    returned for members that do not exist."""
    rows = np.arange(6.0).reshape(2, 3)
    for joined in (solvers.joined_cardinality, solvers.cardinality_gradient):
        with pytest.raises(solvers.PayoffError, match="3 columns but new_row has 2 entries"):
            joined(rows, np.ones(2))
        with pytest.raises(solvers.PayoffError, match="new_row must be a 1-D array"):
            joined(rows, np.ones((1, 3)))


@pytest.mark.parametrize("empty", [[], np.zeros((0, 2))])
def test_the_first_member_joins_an_empty_population(empty):
    """A lone row r: L = |r|^2, so E|Y| = |r|^2 / (|r|^2 + 1); here r = (3, 4) / 5, the unit
    row: 1/2, with gradient 2 K^2 r / scale = 2 (1/2)^2 (3, 4) / 25."""
    value, gradient = solvers.cardinality_gradient(empty, np.array([3.0, 4.0]), scale=5.0)
    assert value == pytest.approx(0.5)
    assert solvers.joined_cardinality(empty, np.array([3.0, 4.0]), scale=5.0) == value
    assert gradient == pytest.approx(np.array([3.0, 4.0]) * 2 * 0.25 / 25)


@pytest.mark.parametrize("payoffs, player, text", [
    ([np.zeros((2, 2)), np.zeros((3, 2))], 0, r"2 arrays \(one per player\) of one shape"),
    ([np.zeros((2, 2, 2)), np.zeros((2, 2, 2))], 0, r"2 arrays \(one per player\) of one shape"),
    ([np.zeros((2, 2)), np.zeros((2, 2))], 2, "player must be from 0 to 1; got 2"),
    ([np.zeros((2, 2)), np.zeros((2, 2))], -1, "player must be from 0 to 1; got -1"),
    (np.zeros((2, 2)), 0, "a list of per-player arrays; got ndarray"),
    (None, 0, "a list of per-player arrays; got NoneType"),
])
def test_a_table_that_is_not_one_is_refused(payoffs, player, text):
    """Mismatched shapes gave a value (population_diversity of (2, 2) and (3, 2) arrays);
    player -1 silently read the last player's rows."""
    with pytest.raises(solvers.PayoffError, match=text):
        solvers.population_rows(payoffs, player)
    if player == 0:
        with pytest.raises(solvers.PayoffError, match=text):
            solvers.population_diversity(payoffs)
