"""psro report for papers: runs grouped by configuration, labels, seeds aggregated with a
Student-t band, unequal runs aligned without invented values, LaTeX/CSV tables, formats."""

from __future__ import annotations

import csv
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import psro
from psro.cli import main
from psro.reports import RunRecord, groups, write_report

T_975 = {2: 12.706204736174704, 3: 4.302652729749464, 4: 3.182446305284263}
"""Student's t quantiles t(0.975, n - 1) for n seeds (from tables, not from scipy)."""


def _fake(seed: int, config: dict, rows: list[tuple[float, float]]) -> SimpleNamespace:
    """A run record with (wall_time_s, exploitability) rows, one per iteration."""
    metrics = [{"iteration": k, "wall_time_s": t, "exploitability": e, "env_steps": 0,
                "exploitability_kind": "exact"} for k, (t, e) in enumerate(rows)]
    return SimpleNamespace(config={"seed": seed, **config}, metrics=metrics,
                           path=Path(f"/runs/{config.get('meta_solver')}/{seed}"))


def test_band_is_the_student_t_interval_of_known_values():
    values = [1.0, 2.0, 3.0, 4.0]  # mean 2.5, sample standard deviation sqrt(5/3)
    records = [_fake(s, {"game": "g"}, [(0.0, 9.0), (1.0, v)]) for s, v in enumerate(values)]
    [group] = groups.group_runs(records)
    curve = groups.aggregate(group, "iteration")
    half = T_975[4] * np.sqrt(5 / 3) / 2
    assert curve.n == 4 and curve.x.tolist() == [0, 1]
    assert curve.mean.tolist() == [9.0, 2.5]
    assert curve.high[1] - curve.mean[1] == pytest.approx(half, rel=1e-12)
    assert curve.mean[1] - curve.low[1] == pytest.approx(half, rel=1e-12)
    rng = np.random.default_rng(0)  # coverage: ~95% of intervals hold the true mean
    hits = 0
    for _ in range(2000):
        sample = rng.normal(3.0, 2.0, size=3)
        fakes = [_fake(s, {}, [(0.0, v)]) for s, v in enumerate(sample)]
        c = groups.aggregate(groups.group_runs(fakes)[0], "iteration")
        hits += c.low[0] <= 3.0 <= c.high[0]
    assert 0.93 <= hits / 2000 <= 0.97


def test_unequal_runs_are_aligned_without_invented_values():
    short = _fake(0, {}, [(0.0, 1.0), (1.0, 0.5), (2.0, 0.25)])
    long = _fake(1, {}, [(0.0, 1.0), (1.5, 0.5), (2.5, 0.1), (4.0, 0.01)])
    group = groups.group_runs([short, long])[0]
    by_iteration = groups.aggregate(group, "iteration")
    assert by_iteration.x.tolist() == [0, 1, 2]  # ends with the shorter run
    assert by_iteration.mean.tolist() == [1.0, 0.5, 0.175]
    by_time = groups.aggregate(group, "wall_time_s")
    assert by_time.x[-1] == 2.0  # no extrapolation past the shorter run's end
    at = {float(x): m for x, m in zip(by_time.x, by_time.mean, strict=True)}
    for x, mean in at.items():  # each run holds the value of its last finished iteration
        a = 1.0 if x < 1 else 0.5 if x < 2 else 0.25
        b = 1.0 if x < 1.5 else 0.5
        assert mean == pytest.approx((a + b) / 2, abs=1e-15)


def test_groups_and_labels():
    records = [_fake(s, {"game": "kuhn_poker", "meta_solver": m, "oracle": "ppo",
                         "iterations": 5 + s, "ppo": {"env_steps": 1}}, [(0.0, 1.0)])
               for m in ("nash", "prd") for s in (0, 1, 2)]
    made = groups.group_runs(records)
    assert [g.label for g in made] == ["ppo, nash", "ppo, prd"]  # the oracle is always named
    assert [g.seeds for g in made] == [[0, 1, 2], [0, 1, 2]]
    records[5].config["ppo"] = {"env_steps": 2}
    made = groups.group_runs(records)
    assert [g.label for g in made] == ["ppo, nash, env_steps=1", "ppo, prd, env_steps=1",
                                       "ppo, prd, env_steps=2"]
    one = groups.group_runs(records[:2])
    assert one[0].label == "ppo, nash"
    renamed = groups.group_runs(records[:2], {"/runs/nash/1": "Nash PSRO"})
    assert renamed[0].label == "Nash PSRO"


def test_a_meta_solver_beside_an_algorithm_that_reads_none_is_in_the_label():
    """xdo reads no meta-solver: a self-play baseline beside it is labelled ``latest``, not
    just ``psro`` (which would read as Nash PSRO)."""
    base = {"game": "kuhn_poker", "oracle": "exact"}
    records = [_fake(0, {**base, "algorithm": "psro", "meta_solver": "latest"}, [(0.0, 1.0)]),
               _fake(0, {**base, "algorithm": "xdo"}, [(0.0, 1.0)]),
               _fake(0, {**base, "algorithm": "psro", "meta_solver": "nash"}, [(0.0, 1.0)])]
    assert [g.label for g in groups.group_runs(records[:2])] == ["psro, exact, latest",
                                                                 "xdo, exact"]
    assert [g.label for g in groups.group_runs(records)] == ["psro, exact, latest",
                                                             "xdo, exact", "psro, exact, nash"]


def test_settings_no_part_reads_never_split_groups():
    """PPO options of exact runs (written out in full by earlier versions), a pipeline width
    of a psro run and xdo's meta-solver are read by no part of those runs."""
    base = {"game": "kuhn_poker", "oracle": "exact"}
    records = [_fake(0, {**base, "ppo": {"env_steps": 1}}, [(0.0, 1.0)]),
               _fake(1, {**base, "ppo": {}, "pipeline_width": 5}, [(0.0, 1.0)]),
               _fake(2, {**base, "ppo": {"lr": 0.1}, "monte_carlo": {"batch": 3}}, [(0.0, 1.0)])]
    assert [g.seeds for g in groups.group_runs(records)] == [[0, 1, 2]]
    xdo = [_fake(s, {**base, "algorithm": "xdo", "meta_solver": m}, [(0.0, 1.0)])
           for s, m in ((0, "nash"), (1, None))]
    assert [g.seeds for g in groups.group_runs(xdo)] == [[0, 1]]
    sampled = [_fake(s, {**base, "oracle": "ppo", "monte_carlo": {"batch": b}}, [(0.0, 1.0)])
               for s, b in ((0, 3), (1, 4))]
    for rec in sampled:
        rec.evaluation = "sampled"  # a game too large to walk reads its Monte Carlo options
    assert len(groups.group_runs(sampled)) == 2


@pytest.mark.parametrize("case,match", [
    ("same seed", "have the same configuration and seed 0: they are not two seeds"),
    ("two labels", "two labels: A, B"),
    ("one label", "would both be labelled 'A'"),
])
def test_reports_refuse_seeds_and_labels_that_would_mislead(case, match):
    runs = [_fake(0, {"meta_solver": "nash"}, [(0.0, 1.0)]),
            _fake(1, {"meta_solver": "nash"}, [(0.0, 1.0)]),
            _fake(0, {"meta_solver": "prd"}, [(0.0, 1.0)])]
    labels = {}
    if case == "same seed":
        runs[1].config["seed"] = 0
        runs[1].path = Path("/runs/copy/0")
    elif case == "two labels":
        labels = {"/runs/nash/0": "A", "/runs/nash/1": "B"}
    else:
        labels = {"/runs/nash/0": "A", "/runs/prd/0": "A"}
    with pytest.raises(psro.RunDirectoryError, match=re.escape(match)):
        groups.group_runs(runs, labels)
    assert len(groups.group_runs(runs[:1] * 2)[0].records) == 1  # one run given twice: once


@pytest.fixture(scope="module")
def seeded_runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("seeded")
    for seed in (0, 1):
        for solver, its in (("nash", 4), ("uniform", 3 + seed)):
            psro.PSRO("kuhn_poker", "exact", solver, seed=seed,
                      out=root / "a" / solver / str(seed)).run(iterations=its)
    psro.PSRO("disc(n=40)", "exact", "nash", out=root / "big").run(iterations=24)
    return root


def test_report_of_seeds_writes_tables_that_parse_back(seeded_runs, tmp_path, capsys):
    dirs = sorted(str(p) for p in (seeded_runs / "a").glob("*/*"))
    out = tmp_path / "rep"
    assert main(["report", *dirs, "--out", str(out), "--format", "pdf", "--format", "svg",
                 "--label", f"{dirs[0]}=Nash PSRO"]) == 0
    rows = groups.final_table(groups.group_runs([RunRecord(d) for d in dirs],
                                                {dirs[0]: "Nash PSRO"}))
    with open(out / "table.csv") as handle:
        parsed = list(csv.DictReader(handle))
    assert [r["group"] for r in parsed] == ["Nash PSRO", "psro, exact, uniform"]
    assert [r["game"] for r in parsed] == ["kuhn_poker", "kuhn_poker"]
    for row, back in zip(rows, parsed, strict=True):
        assert int(back["seeds"]) == row["seeds"] == 2
        for key in ("exploitability", "exploitability_half_width", "wall_time_s"):
            assert float(back[key]) == pytest.approx(row[key], rel=1e-15, nan_ok=True)
    tex = (out / "table.tex").read_text()
    assert tex.startswith("\\begin{tabular}") and "\\toprule" in tex and "\\bottomrule" in tex
    uniform = next(line for line in tex.splitlines() if "& psro, exact, uniform &" in line)
    cells = [c.strip() for c in uniform.rstrip("\\ ").split("&")]
    assert cells[0] == "" and cells[2:4] == ["2", "3--4"]  # the game on its block's first row
    mean, half = (float(x) for x in re.findall(r"[-0-9.e]+", cells[4]))
    assert mean == pytest.approx(rows[1]["exploitability"], rel=1e-3)
    assert half == pytest.approx(rows[1]["exploitability_half_width"], rel=1e-1)
    for name in ("exploitability_iteration", "exploitability_wall_time_s", "gains", "time"):
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF")
        assert b"<svg" in (out / f"{name}.svg").read_bytes()[:500]
    with open(out / "curves_iteration.csv") as handle:
        curve = [r for r in csv.DictReader(handle)
                 if (r["game"], r["group"]) == ("kuhn_poker", "psro, exact, uniform")]
    assert [r["iteration"] for r in curve] == ["0", "1", "2", "3"]  # shorter run's end
    text = (out / "report.md").read_text()
    assert "| run1 | kuhn_poker | Nash PSRO | 1 |" in text
    assert "## Run run2: kuhn_poker: psro, exact, uniform, seed 0" in text


def test_large_populations_are_heatmaps(seeded_runs, tmp_path):
    from psro.reports import figures

    record = RunRecord(seeded_runs / "big")
    assert len(record.mixtures[-1][0]) == 25
    heat = figures.plot_mixtures(record, tmp_path / "m.png")
    assert all(ax.images for ax in heat.axes if ax.get_title())
    small = figures.plot_mixtures(RunRecord(sorted((seeded_runs / "a").glob("*/*"))[0]),
                                  tmp_path / "s.png")
    assert not any(ax.images for ax in small.axes)
    write_report([seeded_runs / "big"], tmp_path / "big")
    assert (tmp_path / "big" / "run0_payoffs.png").stat().st_size > 1000


def test_report_input_errors(seeded_runs, tmp_path, capsys):
    run = str(sorted((seeded_runs / "a").glob("*/*"))[0])
    for argv, match in [(["--format", "gif"], "unknown figure format 'gif'"),
                        (["--label", "nolabel"], "--label needs DIR=TEXT"),
                        (["--label", "/elsewhere=x"], "not one of the runs"),
                        # the second label silently replaced the first
                        (["--label", f"{run}=A", "--label", f"{run}/=B"],
                         f"--label gives {run} two labels, 'A' and 'B'")]:
        assert main(["report", run, "--out", str(tmp_path / "r"), *argv]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and match in err[0], err
