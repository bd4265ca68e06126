"""``psro bench``: a tiny suite end to end (a walkable game with its CFR+ and uniform reference
lines, a game run as too large to walk with PPO, its shared-budget lower bounds and
head-to-head results), resumed and skipped on a second call, refused on another suite's folder;
the env-step budget; C++ OpenSpiel policies in ``psro.exploitability``."""

import csv
import json

import numpy as np
import pyspiel
import pytest
from conftest import as_written_before_config_digests

import psro
from psro.bench import Method, Suite, SuiteGame, run_suite, write_suite_report
from psro.bench.references import cfr_plus_curve, uniform_exploitability
from psro.bench.suite_file import read_suite
from psro.cli import main
from psro.errors import ConfigError, RunDirectoryError

MC = {"min_episodes": 64, "max_episodes": 128, "tolerance": 0.5}
LARGE = {"oracle": "ppo", "max_nodes": 50, "monte_carlo": MC}  # Kuhn, as if too large to walk


def _suite(budget: float = 1.0, large_steps: int = 1200) -> Suite:
    walkable = SuiteGame("kuhn_poker", "Kuhn", "walkable", (
        Method("psro", {"oracle": "exact", "meta_solver": "nash"}),
        Method("xdo", {"oracle": "exact", "algorithm": "xdo"})), budget,
        thresholds=(1e-2, 1e-3))
    large = SuiteGame("kuhn_poker", "Kuhn sampled", "large", (
        Method("psro", {**LARGE, "meta_solver": "nash", "ppo": {"env_steps": 600}}),
        Method("self-play", {**LARGE, "meta_solver": "latest",
                             "ppo": {"env_steps": 600, "greedy": False}})),
        60, env_steps=large_steps, response_steps=1000, thresholds=(), bound_every=1)
    return Suite("tiny", (walkable, large), seeds=(0, 1))


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    runs = run_suite(_suite(), out, quiet=True)
    return out, runs


def test_a_suite_runs_every_method_and_seed_once_and_its_references(suite_dir):
    out, runs = suite_dir
    names = [(r.game.label, r.method.label, r.seed) for r in runs]
    # seed by seed; the exact (deterministic) methods run their first seed only
    assert names == [("Kuhn", "psro", 0), ("Kuhn", "xdo", 0), ("Kuhn sampled", "psro", 0),
                     ("Kuhn sampled", "self-play", 0), ("Kuhn sampled", "psro", 1),
                     ("Kuhn sampled", "self-play", 1)]
    exact = psro.load_run(out / "kuhn" / "psro" / "seed-0")
    assert exact.metrics[-1]["exploitability"] < 1e-9  # Kuhn's equilibrium
    # the uniform policy's exploitability, as OpenSpiel computes it
    game = pyspiel.load_game("kuhn_poker")
    assert uniform_exploitability("kuhn_poker") == pytest.approx(
        pyspiel.exploitability(game, pyspiel.UniformRandomPolicy(game)), abs=1e-12)
    sampled = psro.load_run(out / "kuhn-sampled" / "self-play" / "seed-1")
    assert sampled.config.env_step_budget == 1200 and sampled.metrics[-1]["env_steps"] >= 1200
    assert sampled.metrics[-2]["env_steps"] < 1200  # it stopped at the budget
    # measured during the run too, at the shared budget
    assert sampled.config.lower_bound == {"every": 1, "env_steps": 1000, "final": False}
    assert all(r["exploitability"] is not None for r in sampled.metrics[1:])


def test_the_report_tabulates_methods_references_bounds_and_head_to_head(suite_dir):
    out, _ = suite_dir
    md = write_suite_report(out)
    rows = list(csv.DictReader((md.parent / "results.csv").open()))
    by = {(r["game"], r["method"]): r for r in rows}
    assert float(by[("Kuhn", "psro")]["exploitability_final"]) < 1e-9
    assert float(by[("Kuhn", "uniform policy")]["exploitability_final"]) == pytest.approx(
        0.4583333333, abs=1e-9)
    assert float(by[("Kuhn", "CFR+ (OpenSpiel)")]["exploitability_final"]) < 1e-3
    # the tabular solvers' lines stop at the smallest threshold (1e-3 here); the LP is exact
    for label in ("PCFR+ (tabular)", "DCFR (tabular)", "DCFR+ (tabular)",
                  "linear CFR (tabular)"):
        assert float(by[("Kuhn", label)]["exploitability_final"]) <= 1e-3
    for label in ("sequence-form LP", "sequence-form LP (interior point)"):
        assert float(by[("Kuhn", label)]["exploitability_final"]) < 1e-9
    assert by[("Kuhn", "psro")]["seeds"] == "1 (deterministic)"
    for method in ("psro", "self-play"):
        row = by[("Kuhn sampled", method)]
        assert row["seeds"] == "2" and 0 <= float(row["exploitability_final"]) <= 2
    elo = [float(by[("Kuhn sampled", m)]["elo"]) for m in ("psro", "self-play")]
    assert sum(elo) == pytest.approx(0, abs=1e-6)
    text = md.read_text()
    assert "| Kuhn sampled | psro | self-play |" in text and "walkable.png" in text
    assert "diversity.png" in text and (md.parent / "diversity.png").stat().st_size > 0
    assert (md.parent / "walkable.png").stat().st_size > 0 and "toprule" in (
        md.parent / "results.tex").read_text()
    # the shared bound's response is seeded by the seed only: the same for every method
    bound = psro.storage.text_files.read_json(out / "kuhn-sampled" / "psro" / "seed-0.bound.json")
    assert bound["key"]["response_steps"] == 1000 and len(bound["curves"]) == 2


def test_a_reference_line_that_measured_nothing_is_a_row_of_blanks(suite_dir, tmp_path):
    """An LP that HiGHS had not solved within the budget leaves its reference line empty
    (``psro solve-tree``'s time limit): the report still writes, with that line's row
    blank."""
    import shutil

    out, _ = suite_dir
    copy = tmp_path / "suite"
    shutil.copytree(out, copy)
    path = copy / "kuhn" / "reference.json"
    reference = json.loads(path.read_text())
    reference["tree_solvers"]["lp"] = []
    path.write_text(json.dumps(reference))
    md = write_suite_report(copy)
    rows = {(r["game"], r["method"]): r
            for r in csv.DictReader((md.parent / "results.csv").open())}
    assert rows[("Kuhn", "sequence-form LP")]["thresholds"] == ""
    assert float(rows[("Kuhn", "sequence-form LP (interior point)")]["exploitability_final"]) \
        < 1e-9
    assert "| Kuhn | sequence-form LP | 1 | n/a | n/a | - | - | - |" in md.read_text()


def _exact_seat_values(game, tree, a_path, b_path) -> tuple[float, float]:
    """A's exact expected return against B as player 0 and as player 1 (Kuhn), each meta-policy
    a mixture of whole members, every pair of members valued by OpenSpiel's policy_value."""
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms.expected_game_score import policy_value

    from psro.extensive_form.policies import tabularise
    from psro.storage import checkpoint

    class Table(os_policy.Policy):
        def __init__(self, member, player):
            super().__init__(game, [player])
            legal = np.zeros((len(tree.players[player].legal), tree.num_actions))
            for i, actions in enumerate(tree.players[player].legal):
                legal[i, actions] = 1.0
            self.probs = (legal / legal.sum(axis=1, keepdims=True) if member.kind == "uniform"
                          else tabularise(tree, member, player).probs)
            self.player = player

        def action_probabilities(self, state, player_id=None):
            row = self.probs[tree.infoset_index(self.player,
                                                state.information_state_string(self.player))]
            return {a: float(row[a]) for a in state.legal_actions()}

    def meta(path):
        saved = checkpoint.load(path).state
        return [[(w, Table(m, p)) for w, m in zip(saved.mixtures[p], pop, strict=True) if w > 0]
                for p, pop in enumerate(saved.populations)]

    a, b = meta(a_path), meta(b_path)
    root = game.new_initial_state()

    def value(seat0, seat1, player):
        return sum(w0 * w1 * policy_value(root, [p0, p1])[player]
                   for w0, p0 in seat0 for w1, p1 in seat1)

    return value(a[0], b[1], 0), value(b[0], a[1], 1)


def test_at_the_end_is_each_runs_last_iteration_in_every_view(suite_dir):
    """A time-budgeted run ends with the first iteration that finishes past its budget: the
    table's "at the end", the curve's last point and the run's own last row agree."""
    out, _ = suite_dir
    md = write_suite_report(out)
    rows = {(r["game"], r["method"]): r for r in csv.DictReader((md.parent /
                                                                  "results.csv").open())}
    for method in ("psro", "xdo"):
        last = psro.load_run(out / "kuhn" / method / "seed-0").metrics[-1]
        assert float(rows[("Kuhn", method)]["exploitability_final"]) == last["exploitability"]
    text = md.read_text()
    assert "*at the end*: walkable tier, the mean of the exploitability at each run's end" in text


def _budget_suite(budget: float) -> Suite:
    return Suite("ends", (SuiteGame("kuhn_poker", "Kuhn", "walkable", (
        Method("psro, prd", {"oracle": "exact", "meta_solver": "prd"}),), budget,
        thresholds=(0.1, 0.01)),), seeds=(0,))


def test_a_run_that_ends_past_its_budget_is_reported_at_its_last_iteration(tmp_path):
    from psro.bench.report import _end
    from psro.reports.groups import RunGroup, aggregate

    out = tmp_path / "ends"
    run_suite(_budget_suite(0.05), out, quiet=True)
    run = psro.load_run(out / "kuhn" / "psro-prd" / "seed-0")
    last = run.metrics[-1]
    assert run.stop_reason == "time_budget" and last["wall_time_s"] >= 0.05
    group = RunGroup({}, [psro.reports.RunRecord(run.path)], "psro, prd")
    assert _end(group)[0] == last["exploitability"]
    curve = aggregate(group, "wall_time_s", hold=True)
    assert curve.x[-1] == last["wall_time_s"] and curve.mean[-1] == last["exploitability"]
    md = write_suite_report(out)
    [row] = [r for r in csv.DictReader((md.parent / "results.csv").open())
             if r["method"] == "psro, prd"]
    assert float(row["exploitability_final"]) == last["exploitability"]


def test_head_to_head_keeps_each_seat_and_seed_matching_exact_values(suite_dir, tmp_path):
    """Each seat's Monte Carlo return, per seed, against the exact value of the two final
    meta-policies (Kuhn can be walked though the suite runs it as too large to); measured
    again here with enough episodes that the two seats' values are told apart."""
    from dataclasses import replace

    from psro.bench.evaluation import head_to_head

    out, runs = suite_dir
    sampled = [r for r in runs if r.game.label == "Kuhn sampled"]
    precise = {**MC, "min_episodes": 20_000, "max_episodes": 20_000}
    game = replace(sampled[0].game, methods=tuple(
        replace(m, settings={**m.settings, "monte_carlo": precise})
        for m in sampled[0].game.methods))
    (pair,) = head_to_head(game, sampled, tmp_path / "h2h.json")["pairs"]
    assert (pair["a"], pair["b"]) == ("psro", "self-play") and pair["seeds"] == [0, 1]
    kuhn = pyspiel.load_game("kuhn_poker")
    tree = psro.game_tree(kuhn)
    for row in pair["per_seed"]:
        first, second = _exact_seat_values(kuhn, tree, *(
            out / "kuhn-sampled" / method / f"seed-{row['seed']}"
            for method in ("psro", "self-play")))
        assert abs(row["first"] - first) <= 4 * row["first_std_err"] < 0.1
        assert abs(row["second"] - second) <= 4 * row["second_std_err"] < 0.1
        assert row["score"] == pytest.approx((row["first"] + row["second"]) / 2, abs=1e-12)
    assert pair["first"] == pytest.approx(np.mean([r["first"] for r in pair["per_seed"]]))
    # the suite's own record (its few episodes), in the report
    (pair,) = psro.storage.text_files.read_json(out / "kuhn-sampled" / "head_to_head.json")[
        "pairs"]
    text = write_suite_report(out, out / "r-seats").read_text()
    line = next(x for x in text.splitlines() if x.startswith("| Kuhn sampled | psro | self-play"))
    cells = [c.strip() for c in line.split("|")[1:-1]]
    assert cells[4] == f"{pair['first']:+.3f} +- {pair['first_half_width']:.3f}"
    assert cells[5] == f"{pair['second']:+.3f} +- {pair['second_half_width']:.3f}"
    assert cells[6] == "monte carlo"
    assert cells[8] == ", ".join(f"{r['score']:+.2f}" for r in pair["per_seed"])


def test_head_to_head_plays_a_new_seed_only_and_keeps_seeds_whose_networks_are_gone(
        suite_dir, tmp_path):
    """A suite's folder copied without its networks is continued: the measured runs' bounds
    and head-to-head records are read, not measured. A seed whose record is missing is played
    again, with the numbers of the first play (its episodes are seeded by the seed and the
    methods' places), beside the kept seed's record."""
    import shutil
    from dataclasses import replace

    from psro.bench.evaluation import head_to_head

    out, runs = suite_dir
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    h2h = copy / "kuhn-sampled" / "head_to_head.json"
    (first,) = psro.storage.text_files.read_json(h2h)["pairs"]
    for method in ("psro", "self-play"):
        shutil.rmtree(copy / "kuhn-sampled" / method / "seed-0" / "networks")
    run_suite(_suite(), copy, quiet=True)  # every run ended and was measured: nothing to load
    assert psro.storage.text_files.read_json(h2h)["pairs"] == [first]
    assert "| Kuhn sampled | psro | self-play" in write_suite_report(copy).read_text()
    saved = psro.storage.text_files.read_json(h2h)
    saved["key"]["runs"] = "another set of runs"
    saved["pairs"][0]["per_seed"] = saved["pairs"][0]["per_seed"][:1]  # seed 1 not played
    h2h.write_text(json.dumps(saved))
    sampled = [replace(r, path=copy / r.path.relative_to(out)) for r in runs
               if r.game.label == "Kuhn sampled"]
    (pair,) = head_to_head(sampled[0].game, sampled, h2h)["pairs"]
    assert pair == first
    with pytest.raises(RunDirectoryError):  # seed 0 with no record needs its networks
        head_to_head(sampled[0].game, sampled, tmp_path / "fresh.json")


def test_a_seeds_head_to_head_is_played_when_its_runs_end(tmp_path, monkeypatch):
    """A suite stopped before its last seed keeps the head-to-head results of the seeds whose
    runs ended: seed 0's games are played before seed 1's runs start, and the end of the
    suite plays only seed 1's (seed 0's record is kept as it was)."""
    import psro.bench.runner as runner

    suite = Suite("tiny", (_suite().games[1],), seeds=(0, 1))
    calls = []
    played = runner.head_to_head

    def recorded(game, runs, path):
        calls.append(({(r.method.label, r.seed) for r in runs},
                      (tmp_path / "out" / "kuhn-sampled" / "psro" / "seed-1").exists()))
        return played(game, runs, path)

    monkeypatch.setattr(runner, "head_to_head", recorded)
    run_suite(suite, tmp_path / "out", quiet=True)
    assert calls[0] == ({("psro", 0), ("self-play", 0)}, False)
    assert calls[-1][0] == {("psro", 0), ("self-play", 0), ("psro", 1), ("self-play", 1)}
    (pair,) = json.loads((tmp_path / "out" / "kuhn-sampled" / "head_to_head.json").read_text())[
        "pairs"]
    assert [r["seed"] for r in pair["per_seed"]] == [0, 1]


def test_a_second_call_skips_what_is_finished_and_another_suite_is_refused(suite_dir):
    out, _ = suite_dir
    metrics = out / "kuhn" / "psro" / "seed-0" / "metrics.csv"
    before = metrics.read_bytes()
    run_suite(_suite(), out, quiet=True)
    assert metrics.read_bytes() == before
    with pytest.raises(ConfigError, match="another suite named 'tiny'.*time_budget_s 2.0"):
        run_suite(_suite(budget=2.0), out, quiet=True)
    reference = out / "kuhn" / "reference.json"
    reference.write_text("{damaged")  # the report leaves it out; the next call measures it
    assert "CFR+" not in write_suite_report(out, out / "r2").read_text()
    run_suite(_suite(), out, quiet=True)
    assert "CFR+ (OpenSpiel)" in write_suite_report(out, out / "r3").read_text()


def test_the_report_of_an_unfinished_suite_holds_finished_runs_and_names_the_rest(
        suite_dir, tmp_path):
    """A run killed (or still running) has no ``done.json``: its partial results stay out of
    the table, which says how many of the planned seeds it holds, and the report lists every
    run left, so a table made mid-suite cannot pass for the suite's."""
    import shutil

    out = tmp_path / "partial"
    shutil.copytree(suite_dir[0], out)
    (out / "kuhn-sampled" / "self-play" / "seed-1.done.json").unlink()  # killed
    shutil.rmtree(out / "kuhn" / "xdo" / "seed-0")  # not started
    (out / "kuhn" / "xdo" / "seed-0.done.json").unlink()
    md = write_suite_report(out)
    by = {(r["game"], r["method"]): r for r in csv.DictReader((md.parent / "results.csv").open())}
    alone = psro.storage.text_files.read_json(
        out / "kuhn-sampled" / "self-play" / "seed-0.bound.json")["exploitability"]
    assert by[("Kuhn sampled", "self-play")]["seeds"] == "1 of 2"
    assert float(by[("Kuhn sampled", "self-play")]["exploitability_final"]) == alone
    assert by[("Kuhn sampled", "psro")]["seeds"] == "2"
    assert by[("Kuhn", "xdo")]["seeds"] == "0 of 1"
    assert by[("Kuhn", "psro")]["seeds"] == "1 (deterministic)"
    text = md.read_text()
    assert "**Not finished:** 4 of 6 planned runs have ended" in text
    assert "- Kuhn · xdo: not started: seed 0" in text
    assert "- Kuhn sampled · self-play: started, not ended (killed, or running now): seed 1" \
        in text


def test_a_folder_of_another_suite_is_neither_run_into_nor_reported_as_another(suite_dir,
                                                                               capsys):
    """Running suite B into suite A's folder replaced A's suite.json (its runs then dropped
    out of the report), and ``--report-only`` with B's name wrote A's report as if B's."""
    from dataclasses import replace

    out = suite_dir[0]
    before = (out / "suite.json").read_bytes()
    with pytest.raises(ConfigError, match="holds the runs of suite 'tiny'; use another --out"):
        run_suite(replace(_suite(), name="other"), out, quiet=True)
    assert main(["bench", "quick", "--out", str(out), "--report-only"]) == 2
    assert "holds suite 'tiny', not 'quick'" in capsys.readouterr().err
    assert (out / "suite.json").read_bytes() == before


def test_a_folder_holding_other_things_and_no_suite_is_not_run_into(tmp_path, capsys):
    """``psro bench quick --out RUN_DIR`` (or ``--out runs``) wrote the suite's suite.json and
    run folders into a PSRO run directory, mixing the two, without a word."""
    import psro

    run_dir = tmp_path / "kuhn"
    psro.PSRO("kuhn_poker", "exact", "nash", out=run_dir).run(iterations=1)
    before = sorted(p.name for p in run_dir.iterdir())
    with pytest.raises(ConfigError, match=r"kuhn is not a suite's folder: it holds "
                                          r"config\.json, iterations, metrics\.csv, \.\.\. "
                                          r"and no readable suite\.json; give a new or empty"):
        run_suite(_suite(), run_dir, quiet=True)
    assert main(["bench", "quick", "--out", str(tmp_path)]) == 2  # the folder of the run
    assert "is not a suite's folder: it holds kuhn and no readable suite.json" in \
        capsys.readouterr().err
    assert sorted(p.name for p in run_dir.iterdir()) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kuhn"]
    empty = tmp_path / "empty"
    empty.mkdir()
    run_suite(_suite(), empty, quiet=True, games=["Kuhn"])  # a new or empty folder is used
    assert (empty / "suite.json").exists()


def test_a_call_with_fewer_seeds_than_the_folder_holds_is_refused(tmp_path):
    """``--seeds 1`` into a folder of the same suite with seeds 0-1 replaced its suite.json
    (seeds [0]) and its head-to-head results (seed 0 only), while its tables still counted
    every seed the folder held: a report over two different sets of seeds, without a word."""
    import json

    from psro.bench.folder import seed_ranges

    game = SuiteGame("kuhn_poker", "K", "walkable", (Method("xdo", {"oracle": "exact",
                                                                    "algorithm": "xdo"}),), 1.0)
    suite, out = Suite("x", (game,), seeds=(0, 1)), tmp_path / "s"
    run_suite(suite, out, quiet=True)
    before = (out / "suite.json").read_bytes()
    with pytest.raises(ConfigError, match=r"holds seeds 0-1 of suite 'x', and this call runs "
                                          r"seeds 0: the folder's report and head-to-head "
                                          r"results would leave seeds 1 out"):
        run_suite(suite.with_seeds(1), out, quiet=True)
    assert (out / "suite.json").read_bytes() == before
    run_suite(suite.with_seeds(3), out, quiet=True)  # more seeds: accepted
    assert json.loads((out / "suite.json").read_text())["seeds"] == [0, 1, 2]
    assert seed_ranges([8, 0, 1, 2, 4, 7]) == "0-2, 4, 7-8"


def test_a_suite_folder_from_before_lower_bound_final_is_continued(suite_dir, tmp_path):
    """Runs written before a suite set ``lower_bound.final = false`` (they measured their own
    final bound as well) are the suite's runs still: skipped when finished, not refused."""
    import json
    import shutil

    out = tmp_path / "old"
    shutil.copytree(suite_dir[0], out)
    config = out / "kuhn-sampled" / "psro" / "seed-1" / "config.json"
    as_written_before_config_digests(config.parent)
    saved = json.loads(config.read_text())
    del saved["lower_bound"]["final"]
    config.write_text(json.dumps(saved))
    metrics = config.with_name("metrics.csv")
    before = metrics.read_bytes()
    run_suite(_suite(), out, quiet=True)
    assert metrics.read_bytes() == before
    saved["lower_bound"]["every"] = 2  # a real difference is refused still
    config.write_text(json.dumps(saved))
    with pytest.raises(RunDirectoryError, match="lower_bound.every differ"):
        run_suite(_suite(), out, quiet=True)


def test_the_cli_runs_a_suite_file_and_refuses_bad_input(tmp_path, capsys):
    suite = tmp_path / "s.toml"
    suite.write_text('name = "s"\nseeds = [0]\n[[games]]\ngame = "kuhn_poker"\n'
                     'tier = "walkable"\ntime_budget_s = 0.5\n[[games.methods]]\n'
                     'label = "psro"\nsettings = {oracle = "exact"}\n')
    assert main(["bench", str(suite), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert (tmp_path / "o" / "report" / "report.md").exists()
    for argv, said in ((["bench", "--out", "x"], "give a suite"),
                       (["bench", "nosuch", "--out", "x"], "unknown suite 'nosuch'"),
                       (["bench", "quick"], "--out DIR is required"),
                       (["bench", "quick", "--out", "x", "--seeds", "0"], "--seeds must be"),
                       (["bench", "quick", "--out", "x", "--report-only", "--game", "Kuhn",
                         "--workers", "2"], "--game, --workers would have no effect: "
                                            "--report-only runs nothing")):
        assert main(argv) == 2
        assert said in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text('[[games]]\ngame = "kuhn_poker"\ntier = "huge"\ntime_budget_s = 1\n'
                   '[[games.methods]]\nlabel = "a"\n')
    assert main(["bench", str(bad), "--out", str(tmp_path / "b")]) == 2
    assert "unknown tier 'huge'" in capsys.readouterr().err
    assert main(["bench", "--list"]) == 0 and "quick" in capsys.readouterr().out
    assert main(["bench", str(suite), "--out", str(tmp_path / "empty"), "--report-only"]) == 2
    assert "holds no suite that can be reported" in capsys.readouterr().err


KUHN_GAME = ('name = "s"\nseeds = [0]\n[[games]]\ngame = "kuhn_poker"\nlabel = "Kuhn"\n'
             'tier = "walkable"\ntime_budget_s = 1\n')
EXACT_METHOD = '[[games.methods]]\nlabel = "a"\nsettings = {oracle = "exact"}\n'


@pytest.mark.parametrize("top, game, method, said", [
    ('nme = "x"\n', "", "", "unknown key(s) nme in the top level; accepted: name, seeds, "
                            "description, games"),
    ("", "env_step = 5\n", "", "unknown key(s) env_step in [[games]] 'Kuhn'; accepted: game,"),
    ("", "meta_solver = 'nash'\n", "", "run settings go in a method's settings table"),
    ("", "", "bogus = 1\n", "unknown key(s) bogus in [[games]] 'Kuhn', method 'a'; accepted: "
                            "label, settings"),
    ("", "thresholds = [0.1, -1]\n", "", "Kuhn: a threshold must be a positive number; got "
                                        "-1.0"),
    ("", "env_steps = 5000\n", "", "Kuhn: env_steps budgets trained oracles, and none of its "
                                  "methods trains one"),
    ("", "bound_every = 2\n", "", "Kuhn: bound_every is read on the large tier only"),
    ("", "response_steps = 9\n", "", "response_steps in [[games]] 'Kuhn' is read on the large "
                                    "tier only"),
])
def test_a_suite_file_key_that_nothing_reads_is_refused(top, game, method, said, tmp_path):
    """A misspelt key, one in the wrong table, or one its tier does not read would leave the
    runs other than the file says: refused naming it, before the folder is made."""
    suite = tmp_path / "s.toml"
    head, tail = KUHN_GAME.split("[[games]]\n")
    suite.write_text(head + top + "[[games]]\n" + tail + game +
                     EXACT_METHOD.replace("\nsettings", "\n" + method + "settings"))
    with pytest.raises(ConfigError) as refused:
        read_suite(suite)
    assert said in str(refused.value)
    assert main(["bench", str(suite), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert not (tmp_path / "o").exists()


def test_a_suite_files_description_is_kept(tmp_path):
    suite = tmp_path / "s.toml"
    suite.write_text('description = "Kuhn alone"\n' + KUHN_GAME + EXACT_METHOD)
    assert read_suite(suite).description == "Kuhn alone"


@pytest.mark.parametrize("text, said", [
    ("seeds = [0]\n", "games in the top level must be a list of [[games]] tables; it is "
                      "missing"),
    ("games = 5\n", "games in the top level must be a list of [[games]] tables; got 5"),
    ('games = ["kuhn_poker"]\n', "must be a list of [[games]] tables; got ['kuhn_poker']"),
    ("name = 5\n" + KUHN_GAME.split("\n", 1)[1] + EXACT_METHOD,
     "name in the top level must be a string; got 5"),
    (KUHN_GAME, "methods in [[games]] 'Kuhn' must be a list of [[games.methods]] tables; "
                "it is missing"),
    (KUHN_GAME + "methods = 3\n", "methods in [[games]] 'Kuhn' must be a list of"),
    (KUHN_GAME.replace('tier = "walkable"\n', "") + EXACT_METHOD,
     "tier in [[games]] 'Kuhn' must be walkable or large; it is missing"),
    (KUHN_GAME.replace("time_budget_s = 1", 'time_budget_s = "60"') + EXACT_METHOD,
     "time_budget_s in [[games]] 'Kuhn' must be a number of seconds; got '60'"),
    (KUHN_GAME + 'thresholds = ["1e-3"]\n' + EXACT_METHOD,
     "thresholds in [[games]] 'Kuhn' must be a list of numbers; got ['1e-3']"),
    (KUHN_GAME + "[[games.methods]]\nsettings = {}\n",
     "label in [[games]] 'Kuhn', method 1 must be a string; it is missing"),
    (KUHN_GAME + '[[games.methods]]\nlabel = "a"\nsettings = "exact"\n',
     "settings in [[games]] 'Kuhn', method 'a' must be a table of run settings"),
])
def test_a_suite_file_of_the_wrong_shape_is_refused_naming_the_key(text, said, tmp_path):
    """A missing key, or a table or value of the wrong kind, is refused naming the table, the
    key and what it must hold (it was "TypeError: 'int' object is not iterable" or
    "KeyError: 'methods'"), before the folder is made."""
    suite = tmp_path / "s.toml"
    suite.write_text(text)
    with pytest.raises(ConfigError) as refused:
        read_suite(suite)
    assert said in str(refused.value)
    assert "Error:" not in str(refused.value)
    assert main(["bench", str(suite), "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("seeds,said", [
    ("[0, 0]", "seeds must be distinct"),
    ("[0.5, 1]", "seed must be an integer from 0"),
    ("[true]", "seed must be an integer from 0"),
    ("[-1]", "seed must be an integer from 0"),
    ('"01"', "seeds must be a list of integers"),
    ("[]", "needs at least one game and one seed"),
])
def test_suite_seeds_that_would_run_other_seeds_than_written_are_refused(seeds, said, tmp_path):
    """Seeds were read with int(): 0.5 ran seed 0 and "01" seeds 0 and 1, without a word."""
    path = tmp_path / "s.toml"
    path.write_text(f'seeds = {seeds}\n[[games]]\ngame = "kuhn_poker"\ntier = "walkable"\n'
                    f'time_budget_s = 1\n[[games.methods]]\nlabel = "psro"\n')
    with pytest.raises(ConfigError, match=said):
        read_suite(path)


def test_the_time_left_is_measured_where_it_can_be_and_a_budget_elsewhere():
    from types import SimpleNamespace as Of

    from psro.bench.runner import SuiteProgress

    def run(game, method, budget):
        return Of(game=Of(label=game, time_budget_s=budget), method=Of(label=method))

    runs = [run("A", "x", 100), run("A", "y", 100), run("A", "x", 100), run("B", "x", 50)]
    progress = SuiteProgress(runs)
    assert progress.left_text(0) == "at most 5m50s left"
    progress.took[("A", "x")] = [10.0, 20.0]  # "y" has not run: its game's mean stands for it
    assert progress.left(1) == (15.0 + 15.0, 50.0, 1)
    assert progress.left_text(1) == \
        "about 30.0s left, and at most 50.0s for 1 run of games not timed yet"
    progress.took[("B", "x")] = [7.0]
    assert progress.left_text(3) == "about 7.0s left"


def test_after_a_resume_the_time_left_counts_runs_finished_earlier_with_their_wall_time():
    """A resumed suite skips its finished runs in seconds; the time left read "at most" every
    remaining run's budget (68 hours for a 7-hour remainder) instead of their recorded times."""
    import io
    from types import SimpleNamespace as Of

    from psro.bench.runner import SuiteProgress

    def run(seed):
        return Of(game=Of(label="A", time_budget_s=36000), method=Of(label="x"),
                  name=f"A · x · seed {seed}")

    progress = SuiteProgress([run(s) for s in range(4)], io.StringIO())
    progress.starting(0)
    progress.finished(0, {"iteration": 3, "wall_time_s": 100.0}, ran=False)
    progress.starting(1)
    progress.finished(1, {"iteration": 3, "wall_time_s": 300.0}, ran=True)  # resumed here
    assert progress.left_text(2) == "about 6m40s left"  # two runs at the mean of 100 and 300 s


def test_a_method_may_not_set_what_the_suite_sets():
    game = SuiteGame("kuhn_poker", "K", "walkable", (Method("m", {"seed": 3}),), 1.0)
    from psro.bench.suites import check_suite

    with pytest.raises(ConfigError, match="seed come from the suite"):
        check_suite(Suite("x", (game,)))


@pytest.mark.parametrize("options, said", [
    ({"response_steps": 0}, "L: response_steps must be a positive integer; got 0"),
    ({"bound_every": 0}, "L: bound_every must be a positive integer; got 0"),
    ({"bound_every": "x"}, "L: bound_every must be a positive integer; got 'x'")])
def test_a_large_tier_budget_that_cannot_be_used_is_refused_before_any_run(options, said):
    from psro.bench.suites import check_suite

    game = SuiteGame("kuhn_poker", "L", "large", (Method("m", LARGE),), 1.0, **options)
    with pytest.raises(ConfigError, match=said):
        check_suite(Suite("x", (game,)))


def test_a_walked_game_in_the_large_tier_is_refused_naming_the_run(tmp_path):
    game = SuiteGame("kuhn_poker", "L", "large", (Method("m", {"oracle": "ppo"}),), 1.0)
    with pytest.raises(ConfigError, match="L · m · seed 0: the large tier is for games too "
                                          "large to walk, and this one is walked"):
        run_suite(Suite("x", (game,), seeds=(0,)), tmp_path, quiet=True)


def test_a_method_that_cannot_run_is_refused_before_any_run_of_the_suite(tmp_path):
    """Settings that no part reads were refused only when their run started: a suite whose
    last method set one ran every run before it (hours, in a large suite), then stopped."""
    game = SuiteGame("kuhn_poker", "K", "walkable", (
        Method("psro", {"oracle": "exact", "meta_solver": "nash"}),
        Method("psro, rounds", {"oracle": "exact", "meta_solver": "nash",
                                "anytime_rounds": 3})), 1.0)
    out = tmp_path / "suite"
    with pytest.raises(ConfigError, match="K · psro, rounds · seed 0: anytime_rounds has no "
                                          "effect in this run: it is a setting of algorithm "
                                          "'anytime'"):
        run_suite(Suite("x", (game,), seeds=(0,)), out, quiet=True)
    assert not out.exists()


def test_a_game_too_large_to_walk_is_walked_once_a_process(monkeypatch):
    """Every run (and the suite's check of every method) walked phantom tic-tac-toe until the
    node budget ran out, 7 s each, to find the same answer."""
    import psro
    from psro.build import build_parts
    from psro.errors import GameTooLargeError
    from psro.extensive_form import walks as walks_module

    config = psro.RunConfig(game="leduc_poker", oracle="ppo", meta_solver="latest",
                            max_nodes=100)
    monkeypatch.setattr(walks_module, "_FAILED", {})
    walks = []
    real = walks_module.SequenceFormGame

    def counted(*args, **kwargs):
        walks.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(walks_module, "SequenceFormGame", counted)
    first, again = build_parts(config).context, build_parts(config).context
    assert first.tree is None and again.tree is None and len(walks) == 1
    assert again.walk_error == first.walk_error and "100" in first.walk_error
    with pytest.raises(GameTooLargeError):  # an exploitability report of the same game
        psro.game_tree("leduc_poker", max_nodes=100)
    assert len(walks) == 1
    build_parts(psro.RunConfig(game="leduc_poker", oracle="ppo", meta_solver="latest"))
    assert len(walks) == 2  # another budget: walked (and small enough)


def test_cfr_plus_curve_matches_openspiel_and_falls():
    rows = cfr_plus_curve("kuhn_poker", 0.3)
    game = pyspiel.load_game("kuhn_poker")
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(rows[3]["iteration"]):
        solver.evaluate_and_update_policy()
    assert rows[3]["exploitability"] == pytest.approx(
        pyspiel.exploitability(game, solver.average_policy()), abs=1e-12)
    assert rows[-1]["exploitability"] < rows[0]["exploitability"]


def test_cfr_plus_curve_holds_the_exact_crossing_of_each_threshold():
    """The first row at or below a threshold is the first CFR+ iteration whose average policy
    is there (OpenSpiel's exploitability, after every iteration: the one before is above),
    not the next geometrically spaced measurement; its clock lies between its neighbours'."""
    thresholds = (0.05, 0.002)
    rows = cfr_plus_curve("kuhn_poker", 0.3, thresholds=thresholds)
    game = pyspiel.load_game("kuhn_poker")
    solver = pyspiel.CFRPlusSolver(game)
    values = []
    while not values or values[-1] > min(thresholds):
        solver.evaluate_and_update_policy()
        values.append(pyspiel.exploitability(game, solver.average_policy()))
    for threshold in thresholds:
        first = next(i for i, v in enumerate(values) if v <= threshold) + 1
        row = next(r for r in rows if r["exploitability"] <= threshold)
        assert row["iteration"] == first and first not in (1, 2, 3)  # inside a gap
        assert row["exploitability"] == pytest.approx(values[first - 1], abs=1e-12)
    assert all(a["iteration"] < b["iteration"] and a["wall_time_s"] <= b["wall_time_s"]
               for a, b in zip(rows, rows[1:], strict=False))


def test_cpp_policies_are_read_by_exploitability():
    game = pyspiel.load_game("leduc_poker")
    solver = pyspiel.CFRPlusSolver(game)
    for _ in range(3):
        solver.evaluate_and_update_policy()
    policy = solver.average_policy()
    assert psro.exploitability("leduc_poker", policy).exploitability == pytest.approx(
        pyspiel.exploitability(game, policy), abs=1e-10)


def test_an_env_step_budget_ends_a_run(tmp_path, capsys):
    rows = psro.PSRO("kuhn_poker", "ppo", ppo={"env_steps": 500, "num_envs": 16},
                     env_step_budget=1500,
                     seed=1).run()
    assert rows[-1]["env_steps"] >= 1500 > rows[-2]["env_steps"]
    with pytest.raises(ConfigError, match="env_step_budget has no effect.*'exact'"):
        psro.PSRO("kuhn_poker", "exact", env_step_budget=10)
    assert main(["run", "--game", "kuhn_poker", "--env-step-budget", "0", "--out",
                 str(tmp_path / "r")]) == 2
    assert "--env-step-budget must be a positive integer" in capsys.readouterr().err


def test_a_game_without_perfect_recall_is_played_with_sampled_payoffs():
    spec = "dark_hex(gameversion=cdh,board_size=3,obstype=reveal-nothing)"
    run = psro.PSRO(spec, "ppo", ppo={"env_steps": 200}, monte_carlo=MC)
    assert run.evaluator.name == "sampled"
    with pytest.raises(psro.GameTooLargeError, match="no perfect recall"):
        psro.PSRO(spec, "exact")


def test_the_shipped_suite_files_can_run():
    """Every suite file in experiments/suites reads and every run of it is a valid RunConfig
    (options change over time; a shipped file must not be left refusing to run)."""
    from pathlib import Path

    from psro.bench.suite_file import read_suite
    from psro.bench.suites import run_config

    files = sorted((Path(__file__).parents[2] / "experiments" / "suites").glob("*.toml"))
    assert len(files) >= 2
    for path in files:
        suite = read_suite(path)
        for game in suite.games:
            for method in game.methods:
                config = run_config(game, method, suite.seeds[-1])
                if game.tier == "large":  # the suite measures the final bound itself
                    assert config.lower_bound["final"] is False
                else:  # walkable: exact exploitability, no bound to measure
                    assert not config.lower_bound


@pytest.mark.slow
def test_games_can_be_run_one_call_each_into_one_folder_and_report(tmp_path, capsys):
    out = tmp_path / "o"
    runs = run_suite(_suite(), out, quiet=True, games=["Kuhn sampled"])
    assert {r.game.label for r in runs} == {"Kuhn sampled"}
    assert not (out / "kuhn").exists()
    assert (out / "kuhn-sampled" / "head_to_head.json").exists()
    report = write_suite_report(out).read_text()
    assert "Kuhn sampled" in report and "| Kuhn | psro | 0 of 1 | n/a | n/a |" in report
    assert "4 of 6 planned runs have ended" in report and "- Kuhn · psro: not started" in report
    # the other game by its folder name, into the same folder: the first game's runs are kept
    runs = run_suite(_suite(), out, quiet=True, games=["kuhn"])
    assert {r.game.label for r in runs} == {"Kuhn"}
    report = write_suite_report(out).read_text()
    assert "| Kuhn | psro | 1 (deterministic) |" in report and "| Kuhn sampled | psro | 2 |" \
        in report and "Not finished" not in report
    with pytest.raises(ConfigError, match="no game 'Leduc'; its games are 'Kuhn', 'Kuhn samp"):
        run_suite(_suite(), out, quiet=True, games=["Leduc"])
    suite = tmp_path / "s.toml"
    suite.write_text('name = "s"\nseeds = [0]\n[[games]]\ngame = "kuhn_poker"\n'
                     'tier = "walkable"\ntime_budget_s = 0.5\n[[games.methods]]\n'
                     'label = "psro"\nsettings = {oracle = "exact"}\n')
    assert main(["bench", str(suite), "--out", str(out), "--game", "nosuch"]) == 2
    assert "has no game 'nosuch'; its games are 'kuhn_poker'" in capsys.readouterr().err


@pytest.mark.slow
def test_methods_can_be_run_one_call_each_and_play_the_head_to_head_of_one_call(
        tmp_path, suite_dir, capsys):
    full, _ = suite_dir
    out = tmp_path / "o"
    runs = run_suite(_suite(), out, quiet=True, games=["Kuhn sampled"], methods=["self-play"])
    assert [(r.method.label, r.seed) for r in runs] == [("self-play", 0), ("self-play", 1)]
    assert not (out / "kuhn-sampled" / "psro").exists()
    h2h = out / "kuhn-sampled" / "head_to_head.json"
    assert json.loads(h2h.read_text())["pairs"] == []  # one method: no pair yet
    # the other method by its folder name, in a later call: the pair is played over both
    # seeds, with the numbers of the suite run in one call
    runs = run_suite(_suite(), out, quiet=True, games=["kuhn-sampled"], methods=["psro"])
    assert [(r.method.label, r.seed) for r in runs] == [("psro", 0), ("psro", 1)]
    mine = json.loads(h2h.read_text())["pairs"]
    theirs = json.loads((full / "kuhn-sampled" / "head_to_head.json").read_text())["pairs"]
    assert [p["seeds"] for p in mine] == [[0, 1]] and mine == theirs
    with pytest.raises(ConfigError, match="no game run holds a method 'xdo'; their methods "
                                          "are 'psro', 'self-play'"):
        run_suite(_suite(), out, quiet=True, games=["Kuhn sampled"], methods=["xdo"])
    assert main(["bench", "quick", "--out", str(out), "--method", "nosuch"]) == 2
    assert "no game run holds a method 'nosuch'; their methods are" in capsys.readouterr().err
    assert main(["bench", "quick", "--out", str(out), "--report-only", "--method", "x"]) == 2
    assert "--method would have no effect" in capsys.readouterr().err


def test_a_large_tier_whose_bounds_overlap_says_it_cannot_rank_the_methods():
    from psro.bench.large_tier_report import _inseparable

    overlapping = {"psro": (0.30, 0.08), "self-play": (0.25, 0.08), "fsp": (0.36, 0.05)}
    note = _inseparable("Phantom", overlapping)
    assert note.startswith("**Phantom: the methods are not separated.**")
    assert "half-widths up to 0.08" in note
    assert _inseparable("Phantom", {**overlapping, "psro": (0.05, 0.01)}) is None
    assert _inseparable("Phantom", {"psro": (0.3, 0.1)}) is None  # one method: nothing to rank
    exact = _inseparable("Phantom", overlapping, exact=True)  # a kernel's values: no bound
    assert "exact exploitabilities lie within" in exact and "lower bound" not in exact
    assert "best-response budget" not in exact


def test_every_method_of_a_suite_has_its_own_colour():
    from psro.bench.report_common import style

    for n in (3, 9, 12, 25):
        labels = [f"m{k}" for k in range(n)]
        colours = [style(label, labels)["color"] for label in labels]
        assert len(set(map(tuple, colours))) == n
        assert all(tuple(c) != (0.4980392156862745,) * 3 + (1.0,) for c in colours)


def test_a_large_game_can_keep_the_lower_bound_where_a_kernel_is_exact(tmp_path):
    from psro.bench.suites import describe, from_description

    text = ('name = "lb"\nseeds = [0]\n[[games]]\ngame = "{game}"\ntier = "{tier}"\n'
            'time_budget_s = 5\nexact = false\n[[games.methods]]\nlabel = "psro"\n'
            'settings = {{oracle = "{oracle}"}}\n')
    path = tmp_path / "lb.toml"
    path.write_text(text.format(game="liars_dice(numdice=2,dice_sides=5)", tier="large",
                                oracle="ppo"))
    suite = read_suite(path)
    assert suite.games[0].exact is False
    assert from_description(describe(suite)).games[0].exact is False
    path.write_text(text.format(game="kuhn_poker", tier="walkable", oracle="exact"))
    with pytest.raises(ConfigError, match="exact = false is read on the large tier only"):
        read_suite(path)
    path.write_text(text.replace("exact = false", "exact = 1").format(
        game="kuhn_poker", tier="large", oracle="ppo"))
    with pytest.raises(ConfigError, match="true or false"):
        read_suite(path)


def test_the_walkable_tier_measures_to_1e6_and_holds_games_whose_solves_take_seconds():
    """The two-player zero-sum walkable games are measured down to 1e-6, three larger games
    (not in ``quick``) join them, and the 13-rank Leduc is Leduc's betting: with Leduc's 3
    ranks its spec is a game worth Leduc's value to player 0 (-0.0856064, by the sequence-form
    LP), as ``leduc_poker`` is."""
    from psro.bench.suites import LEDUC_13, SUITES
    from psro.extensive_form.tree_solvers import solve_tree

    walkable = {g.label: g for g in SUITES["walkable"].games}
    larger = ("Goofspiel 6", "Liar's dice 2x3", "Leduc, 13 ranks")
    for label in ("Kuhn", "Leduc", "Liar's dice", "Goofspiel 5", *larger):
        assert walkable[label].thresholds == (1e-1, 1e-2, 1e-3, 1e-4, 1e-6)
    assert walkable["Sheriff (general-sum)"].thresholds == (1e-1, 1e-2, 1e-3)
    assert not set(larger) & {g.label for g in SUITES["quick"].games}
    assert walkable["Leduc, 13 ranks"].game == LEDUC_13
    three = psro.game_tree(LEDUC_13.replace("numRanks=13", "numRanks=3"))
    solved = solve_tree(three, "lp")
    plans = [three.realization_plan(p, pi) for p, pi in enumerate(solved.policies)]
    assert three.expected_returns(plans)[0] == pytest.approx(-0.0856064, abs=1e-6)
