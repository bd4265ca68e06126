import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import games
import games.probe as probe
import solvers


def test_openspiel_games_load_with_parameters():
    g = games.load("goofspiel(num_cards=4)")
    assert g.num_players == 2 and g.num_actions == 4 and g.zero_sum
    assert g.info_state_shape is not None
    kuhn3 = games.load("kuhn_poker(players=3)")
    assert kuhn3.num_players == 3


@pytest.mark.parametrize("spec,match", [
    ("kuhn_pokr", "close matches: kuhn_poker"),
    ("goofspiel(num_cards=x)", "cannot load game"),
    ("disc(q=1)", "accepted: n, seed"),
    ("disc(n=abc)", "must be an integer"),
    ("", "non-empty"),
])
def test_bad_specs(spec, match):
    with pytest.raises(games.GameError, match=match):
        games.load(spec)


def test_catalogue_is_pyspiel_matrix_games_with_known_equilibria():
    g = games.load("biased_rps")
    x, y, v = solvers.zero_sum_nash(g.payoffs[0])
    np.testing.assert_allclose(x, [1 / 2, 1 / 3, 1 / 6], atol=1e-10)
    state = g.new_initial_state()
    state.apply_actions([0, 2])  # rock vs scissors: rock wins by c = 2
    assert state.returns() == [2.0, -2.0]


def test_catalogue_shapes_and_structure():
    blotto = games.load("blotto_margin(coins=5,fields=3)").payoffs[0]
    assert blotto.shape == (21, 21)
    np.testing.assert_allclose(blotto, -blotto.T)
    for name in ["disc(n=8,seed=1)", "spinning_top(n=12,seed=2)"]:
        A = games.load(name).payoffs[0]
        np.testing.assert_allclose(A, -A.T, atol=1e-12)
    top = games.load("spinning_top(n=30)").payoffs[0]
    assert top[-1, 0] == pytest.approx(1.0)  # strongest beats weakest by the transitive gap
    a = games.load("random_general_sum(n=4,m=3,seed=5)").payoffs
    b = games.load("random_general_sum(n=4,m=3,seed=5)").payoffs
    assert a[0].shape == (4, 3) and np.array_equal(a[1], b[1])
    assert not games.load("random_general_sum").zero_sum


@pytest.mark.parametrize("spec,match", [
    ("biased_rps(a=1,a=5)", "'a' of 'biased_rps' is given twice"),
    ("disc(n=0)", "parameter n of 'disc' must be an integer >= 1; got 0"),
    ("disc(n=-1)", "parameter n of 'disc' must be an integer >= 1; got -1"),
    ("blotto_margin(fields=0)",
     "parameter fields of 'blotto_margin' must be an integer >= 1; got 0"),
    ("blotto_margin(coins=-1)",
     "parameter coins of 'blotto_margin' must be an integer >= 0; got -1"),
    ("biased_rps(a=nan)", "parameter a of 'biased_rps' must be a finite number; got nan"),
    ("spinning_top(seed=-2)", "parameter seed of 'spinning_top' must be an integer >= 0"),
    ("blotto_margin(coins=60,fields=6)", "8,259,888 strategies per player; the limit is 5,000"),
    ("random_zero_sum(n=100000)", "100,000 strategies per player"),
])
def test_catalogue_parameters_that_cannot_build_a_game(spec, match):
    with pytest.raises(games.GameError, match=match):
        games.load(spec)


def test_registered_builders_that_fail_or_return_nan_are_game_errors():
    def fragile(k=1):
        return [np.full((2, 2), np.nan)] * 2 if k == 2 else [np.eye(3)[: 3 // (k - 1)]] * 2

    games.register("test_fragile", fragile, {"k": 3}, "fails on small k", minimum={"k": 0})
    with pytest.raises(games.GameError, match="cannot be built with k=1: ZeroDivisionError"):
        games.load("test_fragile(k=1)")
    with pytest.raises(games.GameError, match="non-finite payoffs"):
        games.load("test_fragile(k=2)")
    with pytest.raises(games.GameError, match="parameter k of 'test_fragile' must be an "
                                              "integer >= 0; got -1"):
        games.load("test_fragile(k=-1)")
    with pytest.raises(games.GameError, match="without a default"):
        games.register("test_other", fragile, {"k": 3}, minimum={"j": 0})


def test_parameters_openspiel_would_crash_on_are_refused(monkeypatch):
    with pytest.raises(games.GameError, match="num_cards of 'goofspiel' must not be negative"):
        games.load("goofspiel(num_cards=-3)")  # OpenSpiel itself segfaults on this one

    # A game string whose probe process dies is refused here; this process lives on.
    monkeypatch.setattr(probe, "_PROBE", "import os; os.abort()")
    with pytest.raises(games.GameError, match=r"crashes OpenSpiel \(signal 6\)"):
        games.load("goofspiel(num_cards=3,imp_info=True)")


def test_no_catalogue_name_hides_an_openspiel_game_and_blotto_is_openspiels():
    """The catalogue's margin-scored Blotto was called ``blotto`` and hid OpenSpiel's
    majority-scored ``blotto``: ``blotto(coins=10,fields=5)`` silently ran another game."""
    import itertools

    import pyspiel

    assert not set(games.CATALOG) & set(pyspiel.registered_names())
    allocations = [a for a in itertools.product(range(11), repeat=5) if sum(a) == 10]
    margin = np.array([[np.sign(np.subtract(a, b)).sum() for b in allocations]
                       for a in allocations])
    np.testing.assert_array_equal(games.load("blotto_margin(coins=10,fields=5)").payoffs[0],
                                  margin)
    theirs = games.load("blotto(coins=10,fields=5)").pyspiel_game
    assert theirs.get_type().short_name == "blotto"
    for r, c in [(0, 1), (5, 700), (1000, 3), (42, 42)]:  # OpenSpiel's: the majority's sign
        state = theirs.new_initial_state()
        state.apply_actions([r, c])
        assert state.returns()[0] == np.sign(margin[r, c])


def test_a_probe_waits_for_work_that_announces_itself_and_refuses_silence(monkeypatch):
    """On a busy machine a fresh cache's debate judge trained for longer than the probe's
    limit and the game was refused ("did not load and play within 60 s"): the limit counts
    the child's silence, and a child at work says so."""

    def child(seconds_of_work: float, announce: bool) -> str:
        alive = "print('{\"alive\": true}', flush=True)" if announce else "pass"
        return "\n".join([
            "import json, sys, time",
            "for line in sys.stdin:",
            f"    end = time.monotonic() + {seconds_of_work}",
            "    while time.monotonic() < end:",
            "        time.sleep(0.05)",
            f"        {alive}",
            "    print(json.dumps({'spec': json.loads(line), 'problem': None}), flush=True)", ""])

    monkeypatch.setattr(probe, "PROBE_TIMEOUT_S", 1)
    monkeypatch.setattr(probe, "_probed", {})
    monkeypatch.setattr(probe, "_PROBE", child(3.0, True))
    assert probe.check_specs(["a(x=1)"]) == {"a(x=1)": None}
    monkeypatch.setattr(probe, "_PROBE", child(3.0, False))
    assert probe.check_specs(["b(x=1)"]) == {"b(x=1)": "it did not load and play within 1 s"}


def test_a_probe_child_training_a_judge_says_it_is_at_work(tmp_path):
    """The real child (games.probe.serve) on a debate game whose judge is not cached yet:
    lines that say it is at work come before its answer."""
    done = subprocess.run([sys.executable, "-c", probe._PROBE, str(ROOT)],
                          input=json.dumps("debate(images=10,size=4,reveals=2)") + "\n",
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PSRO_CACHE": str(tmp_path)})
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines[-1] == {"spec": "debate(images=10,size=4,reveals=2)", "problem": None}
    assert len(lines) > 100 and all(line == {"alive": True} for line in lines[:-1])
