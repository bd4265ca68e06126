"""An exact evaluation interrupted part way resumes from its progress file: the members summed
before the interruption are not asked again, and the result is the uninterrupted one's, bit
for bit with one walk thread (liar's dice's public-tree walk, and the placement games' walk
below an opening)."""

import numpy as np
import pyspiel
import pytest

from psro.kernels.exact import exact_exploitability
from psro.kernels.placement_exact import placement_exploitability
from psro.kernels.progress import MixtureProgress

LIARS = "liars_dice(numdice=1,dice_sides=4)"
PTTT = ("phantom_ttt(obstype=reveal-nothing,gameversion=classical)", (0, 1, 7, 6, 8, 4, 4))


class Interrupted(Exception):
    """Stands for the process being stopped while it asks a member."""


class CountedPolicy:
    """A fixed function of the information-state tensor (a seeded projection, softmax over the
    legal actions) that counts the rows it was asked at, and can stop the evaluation."""

    def __init__(self, size: int, actions: int, seed: int):
        self.proj = np.random.default_rng(seed).normal(size=(size, actions))
        self.rows = self.calls = 0
        self.fail_at: int | None = None
        """The call (0: the first) that raises :class:`Interrupted`, None for none."""

    def action_probs(self, vg, idx, player, obs, mask):
        if self.calls == self.fail_at:
            raise Interrupted
        self.calls += 1
        self.rows += len(obs)
        logits = 2.0 * np.sin(np.asarray(obs, dtype=float) @ self.proj[:, :mask.shape[1]])
        weights = np.where(mask, np.exp(logits), 0.0)
        return weights / weights.sum(axis=1, keepdims=True)


def _seats(game):
    size, actions = game.information_state_tensor_size(), game.num_distinct_actions()
    weights = ([0.5, 0.3, 0.2], [0.1, 0.6, 0.3])
    return [[(CountedPolicy(size, actions, 10 * p + k), w) for k, w in enumerate(ws)]
            for p, ws in enumerate(weights)]


def _evaluate(spec, seats, progress=None):
    if spec == LIARS:
        return exact_exploitability(pyspiel.load_game(LIARS), seats, progress=progress)
    from psro.kernels.asking import batch_probs

    return placement_exploitability(pyspiel.load_game(PTTT[0]), seats, batch_probs, PTTT[1],
                                    progress=progress)


@pytest.mark.parametrize("spec", [LIARS, PTTT[0]])
def test_an_interrupted_evaluation_resumes_where_it_stopped(spec, tmp_path, monkeypatch):
    # one walk thread: the threads' partial sums may otherwise meet in another order from
    # one walk to the next (a last-bit difference that is not the resume's)
    monkeypatch.setenv("PSRO_KERNEL_THREADS", "1")
    game = pyspiel.load_game(spec)
    reference = _evaluate(spec, _seats(game))
    seats = _seats(game)
    probe = 1 if spec != LIARS else 0  # the placement kernel asks each member once up front
    seats[1][1][0].fail_at = probe  # stopped while player 1's second member is summed
    path = tmp_path / "progress.npz"
    with pytest.raises(Interrupted):
        _evaluate(spec, seats, MixtureProgress(path, "run 7, iteration 3", every_s=0))
    assert path.is_file()
    seats[1][1][0].fail_at = None
    before = [[policy.rows for policy, _ in seat] for seat in seats]
    result = _evaluate(spec, seats, MixtureProgress(path, "run 7, iteration 3", every_s=0))
    again = [[policy.rows - b for (policy, _), b in zip(seat, was, strict=True)]
             for seat, was in zip(seats, before, strict=True)]
    assert again[0] == [probe] * 3 and again[1][0] == probe  # summed before: not asked again
    assert again[1][1] > probe and again[1][2] > probe
    assert result.nash_conv == reference.nash_conv  # bit for bit
    np.testing.assert_array_equal(result.values, reference.values)
    np.testing.assert_array_equal(result.best_values, reference.best_values)
    assert result.information_sets == reference.information_sets
    assert not path.exists()  # finished: the progress file is removed


@pytest.mark.parametrize("spec", [LIARS, PTTT[0]])
def test_an_evaluation_stopped_in_its_walk_asks_no_member_again(spec, tmp_path, monkeypatch):
    """Every sum was made when the walk that follows them was stopped: the resumed evaluation
    asks no member (beyond the placement kernel's one check a member) and gives the
    uninterrupted result."""
    import psro.kernels.liars_dice_exact as liars
    import psro.kernels.placement_exact as placement

    monkeypatch.setenv("PSRO_KERNEL_THREADS", "1")
    game = pyspiel.load_game(spec)
    reference = _evaluate(spec, _seats(game))
    module, name = (liars, "_best_response") if spec == LIARS else (placement, "gradients")
    walk = getattr(module, name)

    def stopped(*args, **kwargs):
        raise Interrupted

    monkeypatch.setattr(module, name, stopped)
    seats, path = _seats(game), tmp_path / "progress.npz"
    with pytest.raises(Interrupted):
        _evaluate(spec, seats, MixtureProgress(path, "run 7", every_s=3600))
    assert path.is_file()
    monkeypatch.setattr(module, name, walk)
    before = [[policy.rows for policy, _ in seat] for seat in seats]
    result = _evaluate(spec, seats, MixtureProgress(path, "run 7", every_s=3600))
    probe = 0 if spec == LIARS else 1
    assert [[policy.rows - b for (policy, _), b in zip(seat, was, strict=True)]
            for seat, was in zip(seats, before, strict=True)] == [[probe] * 3] * 2
    assert result.nash_conv == reference.nash_conv
    assert result.information_sets == reference.information_sets
    assert not path.exists()


def test_a_progress_file_of_other_mixtures_is_not_used(tmp_path):
    game = pyspiel.load_game(LIARS)
    seats = _seats(game)
    seats[1][0][0].fail_at = 0
    path = tmp_path / "progress.npz"
    with pytest.raises(Interrupted):
        _evaluate(LIARS, seats, MixtureProgress(path, "iteration 3", every_s=0))
    fresh = _seats(game)
    result = _evaluate(LIARS, fresh, MixtureProgress(path, "iteration 4", every_s=0))
    assert all(policy.rows > 0 for seat in fresh for policy, _ in seat)  # all asked afresh
    assert result.nash_conv == _evaluate(LIARS, _seats(game)).nash_conv
    path.write_bytes(b"not a progress file")
    assert MixtureProgress(path, "iteration 4").resume() == ([], 0, None, 0)
