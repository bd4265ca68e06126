"""Bad input raises ValueError naming the problem; solvers/ never imports torch or pyspiel."""

import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import solvers


@pytest.mark.parametrize("payoffs,match", [
    ([[1.0, np.nan], [0.0, 1.0]], "NaN"),
    ([[1.0, np.inf], [0.0, 1.0]], "infinite"),
    (np.zeros((0, 3)), "empty"),
    ([[1.0, 2.0], [3.0]], "ragged"),
    (np.zeros(3), "2-D matrix"),
    (np.zeros((2, 2, 2)), "2-D matrix"),
    ([np.zeros((2, 2)), np.zeros((2, 3))], "same shape"),
    ([np.zeros((2, 2)), np.zeros((2, 2)), np.zeros((2, 2))], "one axis per player"),
    ([np.zeros((2, 2))], "at least 2 players"),
    ("rock", "2-D array or a list"),
    ([[1e308, -1e308], [0.0, 1.0]], "at most 1e\\+300 in absolute value"),
])
def test_bad_payoffs(payoffs, match):
    for call in (solvers.nash, solvers.get("prd"), solvers.get("alpharank"), solvers.get("ce"),
                 lambda g: solvers.nash_conv(g, [[1.0], [1.0]])):
        with pytest.raises(ValueError, match=match):
            call(payoffs)


@pytest.mark.parametrize("name", solvers.names())
def test_payoffs_up_to_the_largest_accepted_give_finite_mixtures(name):
    """At 1e300 (the largest accepted magnitude) every solver still returns mixtures; Nash
    equilibria do not change when a game is scaled, so ``nash`` gives the unscaled answer.
    (At 1e307 regret matching returned NaN and the CE LP failed: such games are refused.)"""
    rng = np.random.default_rng(3)
    small = [rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))]
    huge = [a * solvers.validation.MAX_PAYOFF for a in small]
    mixtures = solvers.get(name)(huge)
    for mixture in (mixtures if isinstance(mixtures, list) else [mixtures]):
        mixture = np.asarray(mixture)
        assert np.all(np.isfinite(mixture)) and abs(mixture.sum() - 1) < 1e-9
    if name == "nash":
        for scaled, plain in zip(mixtures, solvers.nash(small), strict=True):
            assert np.allclose(scaled, plain, atol=1e-6)


def test_zero_sum_nash_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        solvers.zero_sum_nash([[np.nan]])
    with pytest.raises(ValueError, match="empty"):
        solvers.zero_sum_nash(np.zeros((2, 0)))


@pytest.mark.parametrize("mixtures,match", [
    ([[0.5, 0.5], [1.0, 0.0]], "length 2 but the player has 3"),
    ([[0.5, 0.5, 0.0]], "got 1 mixtures"),
    ([[0.5, 0.6, 0.0], [1 / 3] * 3], "sums to"),
    ([[1.5, -0.5, 0.0], [1 / 3] * 3], "negative"),
    ([[np.nan, 0.5, 0.5], [1 / 3] * 3], "NaN"),
    (np.ones(3) / 3, "one 1-D mixture per player"),
])
def test_bad_mixtures(mixtures, match):
    with pytest.raises(ValueError, match=match):
        solvers.nash_conv(np.zeros((3, 3)), mixtures)


def test_bad_options():
    with pytest.raises(ValueError, match="iterations must be a positive integer"):
        solvers.regret_matching(np.zeros((2, 2)), iterations=0)
    with pytest.raises(ValueError, match="unknown nash method"):
        solvers.nash(np.zeros((2, 2)), method="lemke")
    with pytest.raises(ValueError, match="weighting"):
        solvers.pfsp(np.zeros((2, 2)), weighting="soft")


def test_solvers_import_alone():
    code = ("import sys, solvers; "
            "bad = [m for m in ('torch', 'pyspiel', 'open_spiel', 'psro', 'games') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=str(ROOT))
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("call,match", [
    (lambda: solvers.get("regret_matching", plus="false"), "plus must be true or false"),
    (lambda: solvers.get("fictitious_play", seed="abc"), "seed must be a non-negative integer"),
    (lambda: solvers.get("prd", step="0.1"), "step must be a number"),
    (lambda: solvers.get("alpharank", perturbation=-1), "perturbation must be in"),
    (lambda: solvers.zero_sum_nash(np.array([[1j, 0], [0, 1]])), "complex entries"),
    (lambda: solvers.zero_sum_nash([[10**400, 0], [0, 1]]), "too large for a 64-bit float"),
    (lambda: solvers.lemke_howson(np.eye(2), np.eye(3)), "must have the same shape"),
    (lambda: solvers.get("ce")(np.zeros((400, 400))), "319,200 constraints .* the limit is"),
    (lambda: solvers.get("alpharank")(np.zeros((400, 400))), "160,000 profiles; the limit"),
])
def test_quietly_wrong_inputs_are_refused(call, match):
    with pytest.raises(solvers.ToolkitError, match=match):
        call()


def test_payoffs_at_the_limit_are_solved_not_refused():
    big = solvers.validation.MAX_PAYOFF  # the largest payoff every solver accepts
    A = np.array([[big, -big, 0.0], [-big, big, 0.0]])
    x, y, value = solvers.zero_sum_nash(A)
    assert np.allclose(x, [0.5, 0.5]) and np.allclose(y, [0.5, 0.5, 0.0])
    assert abs(value) <= 1e-9 * big


HUGE = np.array([[1e301, 1.0], [0.0, 1.0]])
"""A payoff past solvers.MAX_PAYOFF (1e300)."""
HALF = [np.full(2, 0.5), np.full(2, 0.5)]
PAYOFF_ENTRY_POINTS = [  # every public function that reads payoffs, with the huge game
    ("zero_sum_nash", lambda: solvers.zero_sum_nash(HUGE)),
    ("nash", lambda: solvers.nash([HUGE, -HUGE])),
    ("equilibria", lambda: solvers.equilibria([HUGE, -HUGE])),
    ("lemke_howson", lambda: solvers.lemke_howson(HUGE, -HUGE)),
    ("alpharank", lambda: solvers.alpharank([HUGE, -HUGE])),
    ("correlated_equilibrium", lambda: solvers.correlated_equilibrium([HUGE, -HUGE])),
    ("coarse_correlated_equilibrium",
     lambda: solvers.coarse_correlated_equilibrium([HUGE, -HUGE])),
    ("correlated_gains", lambda: solvers.correlated_gains([HUGE, -HUGE], np.full((2, 2), .25))),
    ("expected_payoffs", lambda: solvers.expected_payoffs([HUGE, -HUGE], HALF)),
    ("nash_conv", lambda: solvers.nash_conv([HUGE, -HUGE], HALF)),
    ("exploitability", lambda: solvers.exploitability([HUGE, -HUGE], HALF)),
    ("deviation_gains", lambda: solvers.deviation_gains([HUGE, -HUGE], HALF)),
    ("action_values", lambda: solvers.action_values([HUGE, -HUGE], HALF, 0)),
    ("elo_ratings", lambda: solvers.elo_ratings(HUGE, kind="payoff")),
    ("nash_averaging", lambda: solvers.nash_averaging(HUGE)),
    ("expected_cardinality", lambda: solvers.expected_cardinality(HUGE)),
    ("joined_cardinality", lambda: solvers.joined_cardinality(HUGE, np.ones(2))),
    ("cardinality_gradient", lambda: solvers.cardinality_gradient(HUGE, np.ones(2))),
    ("population_rows", lambda: solvers.population_rows([HUGE, -HUGE], 0)),
    ("population_diversity", lambda: solvers.population_diversity([HUGE, -HUGE])),
    *((f"get({name!r})", lambda name=name: solvers.get(name)([HUGE, -HUGE]))
      for name in solvers.names()),
    *((f"get_joint({name!r})", lambda name=name: solvers.get_joint(name)([HUGE, -HUGE]))
      for name in solvers.joint_names()),
]


@pytest.mark.parametrize("name,call", PAYOFF_ENTRY_POINTS,
                         ids=[e[0] for e in PAYOFF_ENTRY_POINTS])
def test_every_public_solver_refuses_payoffs_past_max_payoff(name, call):
    with pytest.raises(solvers.PayoffError, match="at most 1e\\+300 in absolute value"):
        call()
