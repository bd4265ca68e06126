"""Smoke tests: every experiment script runs at a tiny budget and writes its figure, run
directories and report."""

import importlib
import sys

import numpy as np
import pytest
from conftest import ROOT

EXPERIMENTS = ROOT / "experiments"


@pytest.fixture(autouse=True)
def experiments_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXPERIMENTS))


@pytest.mark.parametrize("module,figure,extra", [
    ("cyclic_games", "cyclic.png", []),
    ("poker", "poker.png", ["--solvers", "nash", "pfsp"]),
    ("three_player", "three_player.png", []),
    ("general_sum", "general_sum.png", []),
])
@pytest.mark.slow
def test_experiment_smoke(module, figure, extra, tmp_path, capsys):
    mod = importlib.import_module(module)
    mod.main(["--quick", "--out", str(tmp_path)] + extra)
    assert (tmp_path / figure).read_bytes().startswith(b"\x89PNG")
    reports = list(tmp_path.glob("report*/report.html"))
    assert reports
    runs = [p for p in tmp_path.iterdir() if (p / "metrics.csv").is_file()]
    assert runs
    out = capsys.readouterr().out
    assert "exploitability" in out
    sys.modules.pop(module, None)


def test_ppo_profile_accounts_for_the_iterations_and_their_env_steps():
    """The profile's parts are disjoint shares of the profiled iterations, and its env steps
    are the budget the config sets (2 iterations x 2 players x 600 steps, each best response
    finishing the episodes its 16 games are in: at most 3 more steps a game in Kuhn)."""
    mod = importlib.import_module("bench_ppo_profile")
    result = mod.profile("kuhn_poker", 2, {"env_steps": 600, "steps_per_update": 128,
                                           "num_envs": 16}, seed=0, monte_carlo={})
    parts, total = result["parts"], result["total"]
    assert 2 * 2 * 600 <= result["env_steps"] <= 2 * 2 * (600 + 16 * 3)
    assert parts["rollouts"] > 0 and parts["PPO updates"] > 0 and parts["tabularisation"] > 0
    assert sum(parts.values()) <= total * 1.01
    assert 0 < result["engine"] < parts["rollouts"] + parts["tabularisation"] + 0.1 * total
    sys.modules.pop("bench_ppo_profile", None)


def test_small_exact_benchmark_times_cfr_plus_to_the_exact_crossing(capsys):
    """CFR+'s time is taken at the first iteration whose average policy is at or below the
    threshold (OpenSpiel's own exploitability: the iteration before it is above), and the
    table has a row per game with xdo's and CFR+'s medians."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    mod = importlib.import_module("bench_small_exact")
    seconds, iterations = mod.cfr_plus_time("kuhn_poker", 0.01)
    game = pyspiel.load_game("kuhn_poker")
    solver = pyspiel.CFRPlusSolver(game)
    values = []
    for _ in range(iterations):
        solver.evaluate_and_update_policy()
        values.append(exploitability.exploitability(game, solver.average_policy()))
    assert seconds > 0 and values[-1] <= 0.01 < values[-2]
    mod.main(["--games", "kuhn_poker", "--repeats", "1", "--threshold", "0.01"])
    row = [line for line in capsys.readouterr().out.splitlines()
           if line.startswith("| kuhn_poker |")]
    assert len(row) == 1 and row[0].endswith("/1 |")
    sys.modules.pop("bench_small_exact", None)


@pytest.mark.slow
def test_debate_experiment_smoke(tmp_path, monkeypatch):
    """The quick debate experiment writes its figure and table; its random-reveals figure is a
    Monte Carlo estimate of the exact value of uniform play (0.801 on this tiny game, from the
    walked tree), and the judge-alone figure is the judge's accuracy."""
    import json

    import psro
    from games import judge as judges

    monkeypatch.setenv("PSRO_CACHE", str(tmp_path / "cache"))
    mod = importlib.import_module("debate")
    mod.main(["--quick", "--out", str(tmp_path)])
    assert (tmp_path / "debate.png").read_bytes().startswith(b"\x89PNG")
    results = json.loads((tmp_path / "results.json").read_text())["2"]
    exact = psro.PSRO("debate(reveals=2,size=4,images=10)", "exact", "nash").run(iterations=1)
    assert results["random reveals"][0] == pytest.approx((1 + exact[0]["value_p0"]) / 2,
                                                         abs=0.03)
    alone = [judges.accuracy(judges.judge(4, 2, 0), 2, seed=s)[0] for s in (0, 1)]
    assert results["judge alone"][0] == pytest.approx(np.mean(alone))
    for method in ("psro", "self-play"):
        assert 0 <= results[method][0] <= 1 and results[f"{method} env steps"] >= 3000
        for side in ("trained honest, random liar", "random honest, trained liar"):
            assert 0 <= results[f"{method}: {side}"][0] <= 1
    assert "| 2 |" in (tmp_path / "results.md").read_text()
    sys.modules.pop("debate", None)


def test_blas_threads_benchmark_runs_both_settings_to_the_same_rows(capsys):
    """On Kuhn, one repeat, the small judge, with a core kept busy: both settings print their
    product, run and training figures, and the runs' rows and the judges agree (the script
    checks them)."""
    importlib.import_module("bench_blas_threads").main(["--busy", "--game", "kuhn_poker",
                                                        "--repeats", "1", "--judge-size", "4"])
    out = capsys.readouterr().out
    assert "one core kept busy by another process" in out
    assert "us on one" in out and "the same rows" in out and "the same weights" in out


def test_payoff_entries_benchmark_compares_the_three_tables(tmp_path, capsys):
    """One seed, one iteration: every method runs, the capped one keeps to its cap, and the
    table has a row per method with the episodes relative to filling every entry."""
    import psro

    mod = importlib.import_module("bench_payoff_entries")
    mod.main(["--out", str(tmp_path), "--iterations", "1", "--ppo-steps", "4096",
              "--seeds", "1", "--response-steps", "4096", "--cap", "700", "--backend",
              "local", "--monte-carlo", "max_episodes=256", "--lower-bound"])
    out = capsys.readouterr().out
    for label in ("| all | 1 |", "| support | 1 |", "| support + cap | 1 |"):
        assert label in out
    capped = psro.load_run(tmp_path / "phantom-ttt" / "support-cap" / "seed-0")
    assert all(row["payoff_episodes"] <= 700 for row in capped.metrics)
    assert (tmp_path / "report" / "report.md").is_file()
    sys.modules.pop("bench_payoff_entries", None)


def test_anytime_rounds_benchmark_times_a_round_both_ways(tmp_path, capsys):
    """A small PPO run's members: each setting's round is timed and its episodes counted (the
    fixed one: members x episodes)."""
    import psro

    psro.PSRO("kuhn_poker", "ppo", "nash", ppo={"env_steps": 512, "num_envs": 16}, seed=0,
              out=tmp_path / "run").run(iterations=2)
    mod = importlib.import_module("bench_anytime_rounds")
    mod.main([str(tmp_path / "run"), "--members", "3", "--episodes", "64", "--repeats", "1"])
    out = capsys.readouterr().out
    assert "3 members of player 0" in out and "ratio:" in out
    assert "64 episodes: " in out and " s a round, 192 episodes," in out
    sys.modules.pop("bench_anytime_rounds", None)


def test_grpo_benchmark_reads_a_suite_folder_and_pairs_the_oracles_by_seed(tmp_path, capsys):
    """Two oracles and two seeds laid out as a suite writes them: the table's mean and the
    paired differences are those of the runs' own last rows."""
    import json

    import psro

    final = {}
    for oracle in ("ppo", "grpo"):
        for seed in (0, 1):
            folder = tmp_path / "kuhn" / f"psro-{oracle}"
            rows = psro.PSRO("kuhn_poker", oracle, "nash", seed=seed, out=folder / f"seed-{seed}",
                             ppo={"env_steps": 1_000, "num_envs": 32}).run(iterations=1)
            (folder / f"seed-{seed}.done.json").write_text(json.dumps({"iteration": 1}))
            final[oracle, seed] = rows[-1]["exploitability"]
    mod = importlib.import_module("bench_grpo")
    assert mod.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    mean = (final["grpo", 0] + final["grpo", 1]) / 2
    assert f"| kuhn | psro-grpo | 2 | {mean:.4f} +- " in out
    gaps = [final["grpo", s] - final["ppo", s] for s in (0, 1)]
    assert f"| kuhn | psro | 2 | {np.mean(gaps):.4f} +- " in out
    assert ", ".join(f"{g:+.3f}" for g in gaps) in out
    assert mod.main([str(tmp_path / "empty")]) == 2
    sys.modules.pop("bench_grpo", None)


@pytest.mark.slow
def test_judge_comparison_fixed_and_learning_judges(tmp_path, monkeypatch, capsys):
    """The judge comparison on the tiny walked debate, one seed: at iteration 0 every judge is
    the fixed judge, its honest win rate a Monte Carlo estimate of uniform play's exact value
    (0.801, from the walked tree), its accuracy the judge's on the held-out images; the fixed
    judge stays; a learning judge's file at each iteration is the judge its row names; bad
    flags are one line and exit 2."""
    import json

    from games import judge as judges

    monkeypatch.setenv("PSRO_CACHE", str(tmp_path / "cache"))
    mod = importlib.import_module("debate_judges")
    setting = mod.Setting(reveals=2, size=4, images=10, iterations=2, ppo_steps=1000,
                          debates=512, out=str(tmp_path), walked=True)
    stats = mod.main(setting, [0.3], [0], jobs=1)
    assert set(stats) == {"fixed", "self", "anchor 0.3"}
    fixed = judges.judge(4, 2, 0)
    images, labels = mod.held_out(setting)
    assert len(labels) > 300  # the 4x4 debate images past the first ten
    mask = judges.random_reveals(images, 2, np.random.default_rng(mod.derive_seed(0, 4000)))
    alone = float(np.mean(fixed.classify(mask, images) == labels))
    for name in stats:
        rows = json.loads((tmp_path / "runs" / f"{name}-seed0.json").read_text())["rows"]
        assert rows[0]["accuracy"] == pytest.approx(alone)
        assert rows[0]["agreement"] == pytest.approx(0.801, abs=0.06)
        assert rows[0]["judge_sha256"] == fixed.checksum
        for t, row in enumerate(rows[1:], start=1):
            if name == "fixed":
                assert row["judge_sha256"] == fixed.checksum
                assert row["agreement"] == row["fixed judge"]
            else:
                saved = judges.load_file(tmp_path / "judges" / f"{name}-seed0" / f"judge-{t}.npz")
                assert row["judge_sha256"] == saved.checksum != fixed.checksum
    assert "anchor 0.3" in (tmp_path / "results.md").read_text()
    assert (tmp_path / "judges.png").read_bytes().startswith(b"\x89PNG")
    debate = importlib.import_module("debate")
    with pytest.raises(SystemExit) as stop:
        debate.main(["--judges", "--anchors", "2"])
    assert stop.value.code == 2 and "--anchors must be fractions" in capsys.readouterr().err
    sys.modules.pop("debate_judges", None)
    sys.modules.pop("debate", None)


def test_lower_bound_benchmark_reads_the_exact_value_a_suite_recorded(tmp_path):
    """A suite's exact value beside a run is used only for the iteration it was measured on
    (a run resumed past it is evaluated again) and only where it is exact."""
    import json

    mod = importlib.import_module("bench_lower_bound")
    run = tmp_path / "psro" / "seed-0"
    run.mkdir(parents=True)
    assert mod.recorded_exact(run, 9) is None
    record = {"key": {"iteration": 9}, "exploitability": 0.85, "exploitability_kind": "exact"}
    (tmp_path / "psro" / "seed-0.bound.json").write_text(json.dumps(record))
    assert mod.recorded_exact(run, 9) == 0.85
    assert mod.recorded_exact(run, 10) is None
    record["exploitability_kind"] = "lower_bound"
    (tmp_path / "psro" / "seed-0.bound.json").write_text(json.dumps(record))
    assert mod.recorded_exact(run, 9) is None
    sys.modules.pop("bench_lower_bound", None)


@pytest.mark.parametrize("iterations", [1, 30])
def test_double_oracle_started_by_dcfr_ends_at_an_equilibrium(iterations):
    """The xdo-floor benchmark's double oracle started from DCFR's support ends, on Kuhn poker,
    at an exact equilibrium: OpenSpiel's own exploitability of its policies is 0 (1e-9) and
    player 0's value is the game's, -1/18; every threshold was crossed."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game("kuhn_poker")
    tree = SequenceFormGame(game, name="kuhn_poker")
    run = mod.started_double_oracle(tree, iterations)
    policy = to_openspiel(tree, [TabularPolicy(p, probs) for p, probs in
                                 enumerate(run.policies)])
    assert exploitability.exploitability(game, policy) < 1e-9
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(run.policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(-1 / 18, abs=1e-9)
    assert set(run.crossings) == set(mod.THRESHOLDS) and run.lps >= 1
    assert 0 < run.share <= 1


@pytest.mark.parametrize("game_name, value, method", [("kuhn_poker", -1 / 18, "simplex"),
                                                      ("leduc_poker", -0.0856064, "simplex"),
                                                      ("leduc_poker", -0.0856064, "ipm")])
def test_double_oracle_adding_improving_actions_ends_at_an_equilibrium(game_name, value, method):
    """The xdo-floor benchmark's double oracle that adds only improving actions ends at an
    exact equilibrium, its LPs by either of HiGHS's methods: OpenSpiel's own exploitability of
    its policies is 0 (1e-9) and player 0's value is the game's (Kuhn -1/18; Leduc -0.0856064,
    to 1e-6), every threshold crossed; its restricted game leaves some actions out."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game(game_name)
    tree = SequenceFormGame(game, name=game_name)
    run = mod.improving_double_oracle(tree, method=method)
    policy = to_openspiel(tree, [TabularPolicy(p, probs) for p, probs in
                                 enumerate(run.policies)])
    assert exploitability.exploitability(game, policy) < 1e-9
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(run.policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(value, abs=1e-6)
    assert set(run.crossings) == set(mod.THRESHOLDS) and run.lps >= 2
    assert 0 < run.share < 1


def test_final_restricted_solves_are_measured_over_the_whole_game():
    """The xdo-floor benchmark's part 9 measures a solve on a restricted game over the whole
    game: on Leduc, DCFR on ``xdo_cfr``'s restricted game when it crossed 1e-3 (some actions
    left out) for 100 iterations, and on the whole game to 1e-2 (where it stops, not at its
    budget): each one's exploitability is OpenSpiel's own of its average policies, to
    1e-9."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame
    from psro.extensive_form.sequence_passes import behaviour
    from psro.extensive_form.tree_double_oracle import TreeDoubleOracle

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game("leduc_poker")
    tree = SequenceFormGame(game, name="leduc_poker")
    oracle = TreeDoubleOracle(tree, variant="cfr+")
    while oracle.step(stop_below=1e-3) > 1e-3:
        pass
    assert oracle.share() < 1
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    for allowed, masks in ((oracle.allowed, oracle.allowed_actions()),
                           ([np.ones_like(a) for a in oracle.allowed], legal)):
        whole = masks is legal
        run, _, value = mod.restricted_solve(oracle, allowed, "dcfr", 1e-2, 20.0,
                                             None if whole else 100)
        policies = [behaviour(tree, p, run.on_tree(p, plan), masks[p])
                    for p, plan in enumerate(run.average_plans())]
        policy = to_openspiel(tree, [TabularPolicy(p, probs)
                                     for p, probs in enumerate(policies)])
        assert value == pytest.approx(exploitability.exploitability(game, policy), abs=1e-9)
        assert value <= 1e-2 if whole else run.t == 100


def test_settled_split_times_the_run_solve_tree_makes(capsys):
    """The xdo-floor benchmark's part 10 on Leduc: its timed ``xdo_dcfr+`` run takes the steps
    of ``solve_tree``'s own (the same double-oracle and restricted iterations to 1e-3), ends at
    OpenSpiel's exploitability of its policies (1e-9), settles on the way, splits its clock
    into parts that are each positive and together no more than the whole, and leaves the
    timed methods as they were; its printed row has a cell per column."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.compiled_cfr import CompiledRun
    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame
    from psro.extensive_form.tree_solvers import solve_tree

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game("leduc_poker")
    tree = SequenceFormGame(game, name="leduc_poker")
    run_method = CompiledRun.run
    split = mod.settled_split(tree, 1e-3, 30.0)
    assert CompiledRun.run is run_method
    plain = solve_tree(tree, "xdo_dcfr+", (1e-3,), 30.0)
    oracle = split.oracle
    assert plain.crossings[1e-3]["iterations"] == oracle.iterations
    assert [sum(phase[k] for phase in split.phases.values()) for k in (1, 2)] == \
        [oracle.iterations, oracle.restricted_iterations]
    assert all(phase[1] > 0 for phase in split.phases.values())
    policy = to_openspiel(tree, [TabularPolicy(p, probs)
                                 for p, probs in enumerate(oracle.policies())])
    assert split.exploitability == pytest.approx(exploitability.exploitability(game, policy),
                                                 abs=1e-9)
    assert split.exploitability <= 1e-3
    assert all(seconds > 0 for seconds in split.work.values())
    assert sum(split.work.values()) <= split.seconds
    mod.split_row("leduc_poker", 30.0, 1e-3)
    assert capsys.readouterr().out.strip().count("|") == 9


@pytest.mark.parametrize("game_name, value", [("kuhn_poker", -1 / 18),
                                              ("leduc_poker", -0.0856064)])
def test_one_sided_lps_on_an_equilibriums_support_give_an_equilibrium(game_name, value):
    """The xdo-floor benchmark's one-sided LPs (each player restricted to the actions an
    equilibrium plays, against an opponent with every action) give an exact equilibrium:
    OpenSpiel's exploitability 0 (1e-9) and the game's value (Kuhn -1/18; Leduc -0.0856064),
    from a restricted game that leaves actions out."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame
    from psro.extensive_form.sequence_lp import SequenceFormLP

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game(game_name)
    tree = SequenceFormGame(game, name=game_name)
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    lp = SequenceFormLP(tree)
    allowed = mod.support_of(tree, lp.solve(legal)[0])
    assert sum(int(a.sum()) for a in allowed) < sum(int(a.sum()) for a in legal)
    policies, _ = mod.one_sided(lp, allowed, legal)
    assert all(not (p > 0)[~a].any() for p, a in zip(policies, allowed, strict=True))
    policy = to_openspiel(tree, [TabularPolicy(p, probs) for p, probs in enumerate(policies)])
    assert exploitability.exploitability(game, policy) < 1e-9
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(value, abs=1e-6)


@pytest.mark.parametrize("iterations", [1, 30])
def test_one_sided_double_oracle_ends_at_an_equilibrium(iterations):
    """The xdo-floor benchmark's one-sided double oracle, started from DCFR's support, ends on
    Leduc at an exact equilibrium: OpenSpiel's exploitability 0 (1e-9), player 0's value the
    game's -0.0856064, every threshold crossed."""
    import pyspiel
    from open_spiel.python.algorithms import exploitability

    from psro.extensive_form.policies import TabularPolicy, to_openspiel
    from psro.extensive_form.sequence_form import SequenceFormGame

    mod = importlib.import_module("bench_xdo_floor")
    game = pyspiel.load_game("leduc_poker")
    tree = SequenceFormGame(game, name="leduc_poker")
    run = mod.one_sided_double_oracle(tree, iterations, budget=60.0)
    policy = to_openspiel(tree, [TabularPolicy(p, probs) for p, probs in
                                 enumerate(run.policies)])
    assert exploitability.exploitability(game, policy) < 1e-9
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(run.policies)]
    assert tree.expected_returns(plans)[0] == pytest.approx(-0.0856064, abs=1e-6)
    assert set(run.crossings) == set(mod.THRESHOLDS) and run.lps >= 2


def test_restricted_lps_on_the_part_reached_have_the_whole_formulations_values(capsys):
    """Step 8 of the xdo-floor benchmark on Leduc: each restricted LP of the improving double
    oracle, solved on the part of the game its players reach, has the value of the whole
    game's LP with the disallowed sequences bounded to zero (HiGHS on both; to 1e-9), and
    some of those restricted games reach only part of the leaves."""
    mod = importlib.import_module("bench_xdo_floor")
    mod.pruned("leduc_poker")
    cells = [c.strip() for c in capsys.readouterr().out.strip().split("|")[1:-1]]
    assert cells[0] == "leduc_poker" and int(cells[1]) >= 2
    least = float(cells[2].split("-")[0].rstrip("%"))
    assert least < 100
    assert float(cells[6]) <= 1e-9


def test_restricted_cfr_iterations_are_weighted_by_the_leaves_both_players_reach():
    """Step 3's weighting: each restricted solve's iterations times the share of the leaves
    at which the uniform policies over both players' allowed actions both put weight
    (computed here from their realization plans)."""
    import psro

    mod = importlib.import_module("bench_xdo_floor")
    run = psro.PSRO("leduc_poker", "exact", algorithm="xdo", xdo_solver="cfr", seed=0)
    run.run(iterations=4)
    tree, algorithm = run.tree, run.parts.algorithm
    solved = [m for m in run.population[0] if m.metadata.get("oracle") == mod.EQUILIBRIUM]
    expected = 0.0
    for member in solved:
        k = member.metadata["iteration"]
        weight = np.ones(len(tree.leaf_chance))
        for p, pop in enumerate(run.population):
            allowed = algorithm.allowed(p, [m for m in pop if m.metadata.get("iteration") <= k])
            plan = tree.realization_plan(p, allowed / allowed.sum(axis=1, keepdims=True))
            weight *= plan[tree.leaf_seqs[p]]
        expected += member.metadata["cfr_iterations"] * float(np.mean(weight > 0))
    leaves, infosets = mod.reached_iterations(run, solved)
    assert leaves == pytest.approx(expected, rel=1e-12)
    assert 0 < leaves < sum(m.metadata["cfr_iterations"] for m in solved)
    assert 0 < infosets < sum(m.metadata["cfr_iterations"] for m in solved)


def _bench_rows_match(capsys, argv: list[str], expected: dict, thresholds: tuple) -> dict:
    """Run ``bench_tree_solvers.py`` with ``argv`` on Leduc and check that its rows are
    ``expected``'s labels, each row's iterations to each threshold those of its ``solve_tree``
    result; returns the rows by label."""
    mod = importlib.import_module("bench_tree_solvers")
    mod.main(["--games", "leduc_poker", "--xdo", "--skip-openspiel", "--budget", "10",
              "--thresholds", ",".join(f"{t:g}" for t in thresholds), *argv])
    rows = {line.split(" | ")[0].lstrip("| "): line for line in
            capsys.readouterr().out.splitlines() if line.startswith("| ") and " s (" in line}
    assert set(rows) == set(expected)
    for label, solved in expected.items():
        cells = rows[label].split(" | ")[1:]
        for cell, threshold in zip(cells, thresholds, strict=True):
            assert f"({solved.crossings[threshold]['iterations']:,})" in cell
    return rows


def test_tree_solver_rows_at_several_shares_are_those_of_each_share(capsys):
    """``bench_tree_solvers.py --cfr-shares 0.2 0.9 --repeats 2``: one ``xdo_cfr`` row per share,
    whose iterations to each threshold are those of ``solve_tree`` with that share, and the
    reference line's iterations are those of the solver alone."""
    import psro
    from psro.extensive_form.tree_solvers import solve_tree

    tree, thresholds = psro.game_tree("leduc_poker"), (1e-2, 1e-3)
    expected = {"dcfr+": solve_tree(tree, "dcfr+", thresholds)}
    for share in (0.2, 0.9):
        expected[f"xdo_cfr, share {share:g} (PSRO family)"] = solve_tree(
            tree, "xdo_cfr", thresholds, cfr_share=share)
    _bench_rows_match(capsys, ["--solvers", "dcfr+", "xdo_cfr", "--cfr-shares", "0.2", "0.9",
                               "--repeats", "2"], expected, thresholds)
    sys.modules.pop("bench_tree_solvers", None)


def test_tree_solver_rows_at_several_settle_growths_are_those_of_each(capsys):
    """``bench_tree_solvers.py --settle-growths 0.03 1 --cfr-shares 0.3``: one ``xdo_dcfr+``
    row per settle growth (and share), whose iterations to each threshold are those of
    ``solve_tree`` with that growth, and differ; ``xdo_cfr``, which does not settle, one row;
    a growth outside [0, 1] refused."""
    import psro
    from psro.extensive_form.tree_solvers import solve_tree

    tree, thresholds = psro.game_tree("leduc_poker"), (1e-3, 1e-4)
    expected = {"xdo_cfr, share 0.3 (PSRO family)": solve_tree(tree, "xdo_cfr", thresholds)}
    for growth in (0.03, 1.0):
        expected[f"xdo_dcfr+, share 0.3, settle growth {growth:g} (PSRO family)"] = solve_tree(
            tree, "xdo_dcfr+", thresholds, settle_growth=growth)
    rows = _bench_rows_match(capsys, ["--solvers", "xdo_cfr", "xdo_dcfr+", "--settle-growths",
                                      "0.03", "1", "--cfr-shares", "0.3"], expected, thresholds)
    iterations = [[cell.split("(")[1] for cell in rows[
        f"xdo_dcfr+, share 0.3, settle growth {growth} (PSRO family)"].split(" | ")[1:]]
        for growth in ("0.03", "1")]
    assert iterations[0] != iterations[1]
    with pytest.raises(SystemExit):
        importlib.import_module("bench_tree_solvers").main(
            ["--games", "leduc_poker", "--settle-growths", "1.5"])
    assert "--settle-growths must be numbers in [0, 1]" in capsys.readouterr().err
    sys.modules.pop("bench_tree_solvers", None)


def test_repeats_measure_the_openspiel_and_xdo_rows_as_often(capsys, monkeypatch):
    """``--repeats 2`` runs OpenSpiel's CFR+ and each ``xdo`` row twice too (each call the real
    one) and prints one row each, whose iterations are those of one run alone."""
    mod = importlib.import_module("bench_tree_solvers")
    calls = {"cfr+": 0, "xdo": 0}
    real_curve, real_xdo = mod.cfr_plus_curve, mod.xdo

    def curve(*args, **kwargs):
        calls["cfr+"] += 1
        return real_curve(*args, **kwargs)

    def xdo(*args, **kwargs):
        calls["xdo"] += 1
        return real_xdo(*args, **kwargs)

    monkeypatch.setattr(mod, "cfr_plus_curve", curve)
    monkeypatch.setattr(mod, "xdo", xdo)
    mod.main(["--games", "kuhn_poker", "--solvers", "cfr+", "--xdo", "lp-improving",
              "--budget", "10", "--repeats", "2", "--thresholds", "1e-2"])
    assert calls == {"cfr+": 2, "xdo": 2}
    rows = {line.split(" | ")[0].lstrip("| "): line for line in
            capsys.readouterr().out.splitlines() if line.startswith("| ") and " s (" in line}
    assert set(rows) == {"cfr+", "OpenSpiel C++ CFR+", "xdo, lp, improving (PSRO family)"}
    alone = real_xdo("kuhn_poker", "lp", "improving", (1e-2,), 10)
    assert f"({alone[1e-2][1]:,})" in rows["xdo, lp, improving (PSRO family)"]
    sys.modules.pop("bench_tree_solvers", None)
