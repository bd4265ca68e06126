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
