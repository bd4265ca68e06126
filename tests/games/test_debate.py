"""The debate game: its rules, what the debaters and the judge see, the judge's training, and a
short PSRO run that makes the honest debater win more often than random reveals do."""

import numpy as np
import pytest

import games
from games import judge as judges
from games.debate import debate_images
from games.digits import digits

TINY = "debate(images=10,size=4,reveals=2)"


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("PSRO_CACHE", str(tmp_path_factory.getbasetemp() / "psro-cache"))


def play(state, actions):
    for action in actions:
        state.apply_action(action)
    return state


def test_digits_split_and_downsampling():
    judge_images, judge_labels = digits("judge")
    debate, labels = digits("debate")
    assert judge_images.shape == (1000, 64) and debate.shape == (797, 64)
    assert set(np.unique(labels)) == set(range(10))
    assert judge_images.max() == 16 and judge_images.min() == 0
    # No image the judge was trained on is debated.
    assert not {row.tobytes() for row in judge_images} & {row.tobytes() for row in debate}
    small, _ = digits("debate", size=4)
    # 4x4 pixel (0, 0) is the rounded mean of the 8x8 block of rows 0-1, columns 0-1.
    block = debate.reshape(-1, 8, 8)[:, :2, :2].mean(axis=(1, 2))
    assert np.array_equal(small[:, 0], np.rint(block).astype(int))


def test_honest_protocol_rules_and_returns():
    game = games.load(TINY)
    assert game.num_players == 2 and game.zero_sum and game.num_actions == 16
    assert game.info_state_shape == (2 * 16 + 20,)
    images, labels = debate_images(4, 2, 10)
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 10
    play(state, [3])
    label = int(labels[3])
    # The honest debater's claim is the true label; the liar picks one of the nine others.
    assert state.current_player() == 1
    assert state.legal_actions() == [a for a in range(10) if a != label]
    lie = state.legal_actions()[0]
    play(state, [lie])
    nonzero = [int(a) for a in np.flatnonzero(images[3] > 0)]
    assert state.current_player() == 0 and state.legal_actions() == nonzero
    play(state, [nonzero[0]])
    assert state.current_player() == 1 and state.legal_actions() == nonzero[1:]
    play(state, [nonzero[-1]])
    assert state.is_terminal()
    mask = np.zeros(16, bool)
    mask[[nonzero[0], nonzero[-1]]] = True
    scores = judges.judge(4, 2, 0).logits(mask[None], images[3][None])[0]
    winner = 0 if scores[label] > scores[lie] else 1
    assert state.returns() == ([1.0, -1.0] if winner == 0 else [-1.0, 1.0])


def test_free_protocol_claims():
    game = games.load("debate(images=10,size=4,reveals=2,protocol=free)")
    state = play(game.new_initial_state(), [0])
    assert state.current_player() == 0 and state.legal_actions() == list(range(10))
    play(state, [7])
    assert state.current_player() == 1 and 7 not in state.legal_actions()
    assert len(state.legal_actions()) == 9


def test_what_debaters_and_judge_see():
    game = games.load(TINY)
    images, _ = debate_images(4, 2, 10)
    state = play(game.new_initial_state(), [2])
    play(state, [state.legal_actions()[0]])
    pixel = state.legal_actions()[0]
    play(state, [pixel])
    for player in (0, 1):  # both debaters see the image, the revealed pixel and the claims
        tensor = np.array(state.information_state_tensor(player))
        assert np.allclose(tensor[:16], images[2] / 16)
        assert tensor[16:32].tolist() == [float(i == pixel) for i in range(16)]
        assert tensor[32:].sum() == 2
    assert state.information_state_string(0) == state.information_state_string(1)
    # The judge reads only revealed pixels: changing every other pixel changes nothing.
    judge = judges.judge(4, 2, 0)
    mask = np.zeros((1, 16), bool)
    mask[0, pixel] = True
    other = images[2].copy()[None]
    other[0, ~mask[0]] = 16 - other[0, ~mask[0]]
    assert np.array_equal(judge.logits(mask, images[2][None]), judge.logits(mask, other))


@pytest.mark.parametrize("spec, text", [
    ("debate(size=5)", "size must be one of 8, 4"),
    ("debate(protocol=loud)", "protocol must be one of honest, free"),
    ("debate(reveals=0)", "reveals must be from 1 to 64"),
    ("debate(size=4,reveals=17)", "reveals must be from 1 to 16")])
def test_bad_parameters_are_refused(spec, text):
    with pytest.raises(games.GameError, match=text):
        games.load(spec)


def test_judge_training_is_reproducible_and_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("PSRO_CACHE", str(tmp_path))
    first, again = judges.train_judge(4, 2, seed=3), judges.train_judge(4, 2, seed=3)
    assert first.checksum == again.checksum
    assert judges.train_judge(4, 2, seed=4).checksum != first.checksum
    # Cached with its checksum; an altered file is not used but retrained.
    judges._JUDGES.clear()
    assert judges.judge(4, 2, 3).checksum == first.checksum
    path = judges.cache_file(4, 2, 3)
    assert path.exists()
    with np.load(path) as saved:
        altered = {k: saved[k] for k in saved.files}
    altered["w2"] = altered["w2"] + 1.0
    np.savez(path, **altered)
    judges._JUDGES.clear()
    assert judges.judge(4, 2, 3).checksum == first.checksum


@pytest.mark.slow
def test_judge_accuracy_from_random_pixels_is_near_the_papers():
    """Irving et al. report 59.4% (6 pixels) and 48.2% (4 pixels) for their MNIST judge; the
    8x8 digits judge, on images it was not trained on, is in the same range."""
    six, images = judges.accuracy(judges.judge(8, 6, 0), 6)
    assert images == 797 and 0.5 < six < 0.7
    four, _ = judges.accuracy(judges.judge(8, 4, 0), 4)
    assert 0.35 < four < six


def test_psro_makes_the_honest_debater_win_more_than_random_reveals():
    import psro

    run = psro.PSRO(TINY, "exact", "nash")
    rows = run.run(iterations=6)
    random_reveals = (1 + rows[0]["value_p0"]) / 2  # both debaters uniformly random
    trained = (1 + rows[-1]["value_p0"]) / 2
    assert random_reveals == pytest.approx(0.801, abs=0.01)
    assert trained >= 0.85
    assert rows[-1]["exploitability"] < rows[0]["exploitability"]


def test_the_debate_game_is_listed():
    import pyspiel

    assert "debate" in pyspiel.registered_names()


@pytest.mark.parametrize("protocol", ["honest", "free"])
def test_declared_size_is_the_walked_leaf_count(protocol):
    from psro.extensive_form.tree_walk import walk_tree

    game = games.load(f"debate(images=10,size=4,reveals=2,protocol={protocol})").pyspiel_game
    walked = walk_tree(game, 10**6, "tiny")
    assert game.min_tree_nodes() == len(walked._leaf_chance) <= walked.nodes


def test_the_full_game_is_refused_without_walking_it(monkeypatch):
    import psro
    from psro.extensive_form import tree_walk

    def walk(*args):
        raise AssertionError("the walk started")

    monkeypatch.setattr(tree_walk.TreeWalk, "_walk", walk)
    with pytest.raises(psro.GameTooLargeError, match="at least 6,303,298,201,920"):
        psro.PSRO("debate", "exact", "nash")


@pytest.mark.slow
def test_worker_processes_play_it_to_the_same_numbers():
    """The game pickles to worker processes (which rebuild its images and judge from its
    parameters) and a run there gives the local run's numbers."""
    import pickle

    import psro

    game = games.load(TINY).pyspiel_game
    copy = pickle.loads(pickle.dumps(game))
    state = copy.new_initial_state()
    assert state.debate is game.debate and str(copy) == str(game)
    settings = {"ppo": {"env_steps": 600, "num_envs": 16, "steps_per_update": 128}, "seed": 3}
    local = psro.PSRO(TINY, "ppo", "nash", **settings).run(iterations=1)
    spread = psro.PSRO(TINY, "ppo", "nash", backend="processes", workers=2,
                       **settings).run(iterations=1)
    assert [r["exploitability"] for r in local] == [r["exploitability"] for r in spread]


def test_a_run_records_the_judge_it_was_played_before(tmp_path):
    import json

    import psro
    from games.digits import SHA256

    psro.PSRO(TINY, "exact", "nash", out=tmp_path / "run").run(iterations=1)
    manifest = json.loads((tmp_path / "run" / "run.json").read_text())
    assert manifest["game_provenance"] == {
        "judge_sha256": judges.train_judge(4, 2, 0).checksum, "digits_sha256": SHA256}


def test_a_retrained_judge_learns_its_labels_and_leaves_the_old_one_unchanged():
    """Trained further on the judge's own images with their true labels, the judge gets more
    of them right (from the same revealed pixels); trained on one constant label, it says
    that label for most images; the judge passed in keeps its weights."""
    judge = judges.judge(4, 2, 0)
    before = judge.checksum
    images, labels = digits("judge", 4)
    mask = judges.random_reveals(images, 2, np.random.default_rng(5))
    right = np.mean(judge.classify(mask, images) == labels)
    taught = judges.retrain(judge, mask, images, labels, seed=0, epochs=20)
    assert np.mean(taught.classify(mask, images) == labels) > right + 0.05
    sevens = judges.retrain(judge, mask, images, np.full(len(labels), 7), seed=0)
    assert np.mean(sevens.classify(mask, images) == 7) > 0.9
    assert judge.checksum == before
    assert judges.retrain(judge, mask, images, labels, seed=0).checksum == \
        judges.retrain(judge, mask, images, labels, seed=0).checksum


@pytest.mark.parametrize("args, text", [
    ((np.zeros((3, 16), bool), np.zeros((3, 16)), np.zeros(2, int)), "labels"),
    ((np.zeros((3, 9), bool), np.zeros((3, 9)), np.zeros(3, int)), r"\(n, 16\)"),
    ((np.zeros((3, 16), bool), np.zeros((3, 16)), np.full(3, 10)), "digits 0..9")])
def test_retraining_refuses_data_that_does_not_fit(args, text):
    with pytest.raises(ValueError, match=text):
        judges.retrain(judges.judge(4, 2, 0), *args, seed=0)


def test_a_debate_plays_before_the_judge_in_its_file(tmp_path):
    """``judge_file``: the game's verdicts are those of the judge in the file, which its
    provenance names; files that are missing, damaged, or for another image size are refused
    in one line."""
    images, labels = digits("judge", 4)
    mask = judges.random_reveals(images, 2, np.random.default_rng(0))
    liar = judges.retrain(judges.judge(4, 2, 0), mask, images, np.full(len(labels), 3), seed=0)
    path = judges.save(liar, tmp_path / "judge.npz")
    game = games.load(f"debate(images=10,size=4,reveals=2,judge_file={path})")
    assert game.pyspiel_game.provenance()["judge_sha256"] == liar.checksum
    fixed = games.load(TINY).pyspiel_game
    differ = 0
    for image in range(10):
        for lie in range(10):
            a, b = game.pyspiel_game.new_initial_state(), fixed.new_initial_state()
            a.apply_action(image)
            if lie == a.label:
                continue
            play(a, [lie])
            play(a, [a.legal_actions()[0]])
            play(a, [a.legal_actions()[-1]])
            play(b, a.history())
            scores = liar.logits(a.revealed_mask()[None], a.debate.images[image][None])[0]
            assert a.returns()[0] == (1.0 if scores[a.label] > scores[lie] else -1.0)
            differ += a.returns() != b.returns()
    assert differ > 0
    for bad, text in (("nope.npz", "not a readable judge file"),
                      ("judge.npz", "holds a judge of 4x4 images; this game's size is 8")):
        with pytest.raises(games.GameError, match=text):
            games.load(f"debate(judge_file={tmp_path / bad})")
    damaged = dict(np.load(path))
    damaged["w1"] = damaged["w1"] * 2
    np.savez(tmp_path / "damaged.npz", **damaged)
    with pytest.raises(games.GameError, match="do not match the checksum"):
        games.load(f"debate(size=4,reveals=2,judge_file={tmp_path / 'damaged.npz'})")
