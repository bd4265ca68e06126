"""Exact head-to-head play of a suite's large-tier game with a compiled kernel (liar's dice
with one die of 4 sides, run as too large to walk): each record equals the value of the two
meta-policies computed on the walked tree (tabularised there, an independent evaluation),
agrees with the Monte Carlo record it replaces, and is kept by the suite's own step."""

import json

import numpy as np
import pytest

import psro
from psro.bench import Method, Suite, SuiteGame, run_suite
from psro.bench.exact_head_to_head import exact_suite_head_to_head
from psro.errors import ConfigError
from psro.extensive_form.policies import tabularise

SPEC = "liars_dice(numdice=1,dice_sides=4)"
SETTINGS = {"oracle": "ppo", "max_nodes": 10, "ppo": {"env_steps": 1500, "num_envs": 16},
            "monte_carlo": {"min_episodes": 64, "max_episodes": 128, "tolerance": 0.5}}


def _plans(tree, run_dir):
    run = psro.load_run(run_dir)
    return [sum(w * tree.realization_plan(p, tree.uniform_policy(p) if m.kind == "uniform"
                                          else tabularise(tree, m, p).probs)
                for m, w in zip(pop, mix, strict=True))
            for p, (pop, mix) in enumerate(zip(run.population, run.mixtures, strict=True))]


def test_exact_records_are_the_walked_values_and_are_kept(tmp_path):
    suite = Suite("exact-h2h", (SuiteGame(SPEC, "Liar's dice 1x4", "large", (
        Method("psro", SETTINGS), Method("self-play", {**SETTINGS, "meta_solver": "latest"})),
        60, env_steps=3000, response_steps=1000, thresholds=()),), seeds=(0, 1))
    out = tmp_path / "s"
    run_suite(suite, out, quiet=True)
    path = out / "liar-s-dice-1x4" / "head_to_head.json"
    sampled = json.loads(path.read_text())["pairs"][0]
    assert sampled["kind"] == "monte carlo"
    lines = []
    exact_suite_head_to_head(suite, out, say=lines.append)
    assert len(lines) == 2 and not list(out.rglob("*.sums.progress.npz"))
    pair = json.loads(path.read_text())["pairs"][0]
    assert pair["kind"] == "exact" and pair["seeds"] == [0, 1]
    tree = psro.game_tree(SPEC)
    for record, mc in zip(pair["per_seed"], sampled["per_seed"], strict=True):
        a = _plans(tree, out / "liar-s-dice-1x4" / "psro" / f"seed-{record['seed']}")
        b = _plans(tree, out / "liar-s-dice-1x4" / "self-play" / f"seed-{record['seed']}")
        assert record["first"] == pytest.approx(tree.expected_returns([a[0], b[1]])[0],
                                                abs=1e-9)
        assert record["second"] == pytest.approx(tree.expected_returns([b[0], a[1]])[1],
                                                 abs=1e-9)
        assert record["score"] == pytest.approx((record["first"] + record["second"]) / 2)
        for seat in ("first", "second"):  # the Monte Carlo estimate it replaces agrees
            assert abs(mc[seat] - record[seat]) < 5 * mc[f"{seat}_std_err"] + 1e-9
    scores = [r["score"] for r in pair["per_seed"]]
    assert pair["score"] == pytest.approx(np.mean(scores))
    run_suite(suite, out, quiet=True)  # the suite's own step keeps the exact records
    assert json.loads(path.read_text())["pairs"][0] == pair
    again = []
    exact_suite_head_to_head(suite, out, say=again.append)
    assert again == []


def test_a_suite_without_a_kernel_game_is_refused():
    suite = Suite("no-kernel", (SuiteGame("kuhn_poker", "Kuhn", "large", (
        Method("psro", SETTINGS),), 60, env_steps=3000, response_steps=1000,
        thresholds=()),), seeds=(0,))
    with pytest.raises(ConfigError, match="none of the chosen games has a compiled kernel"):
        exact_suite_head_to_head(suite, "/nonexistent")
