"""psro report: files, valid PNGs, numbers matching metrics.csv, comparisons, errors."""

import csv
import subprocess
from pathlib import Path

import pytest
from conftest import DATA

import psro
import psro.reports
from psro.cli import main
from psro.errors import RunDirectoryError
from psro.reports import write_report

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    psro.PSRO("kuhn_poker", "exact", "nash", out=root / "nash").run(iterations=4)
    psro.PSRO("kuhn_poker", "exact", "uniform", out=root / "uniform").run(iterations=6)
    return root


def test_report_from_a_real_run(runs, tmp_path):
    md, html = write_report([runs / "nash"], tmp_path / "report")
    text = md.read_text()
    pngs = sorted((tmp_path / "report").glob("*.png"))
    assert {p.name for p in pngs} >= {"exploitability_iteration.png",
                                      "exploitability_wall_time_s.png",
                                      "gains.png", "diversity.png", "time.png",
                                      "run0_mixtures.png", "run0_payoffs.png"}
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
        assert f"({png.name})" in text
    with open(runs / "nash" / "metrics.csv") as handle:
        rows = list(csv.DictReader(handle))
    final = float(rows[-1]["exploitability"])
    assert f"| kuhn_poker | psro, exact, nash | 1 | 4 | {final:.6g} | exact |" in text
    assert "| member | Elo, player 0 | Nash averaging, player 0 |" in text  # ratings: a table
    assert "Made with:" in text and "toolkit 0.1.0" in text and "torch " in text
    for row in rows:  # every iteration's numbers appear in the per-run table
        assert f"| {row['iteration']} | {row['population_size']} | " \
               f"{float(row['exploitability']):.6g} |" in text
    page = html.read_text()
    assert page.count("data:image/png;base64,") == len(pngs)
    assert "src=\"run0" not in page  # self-contained: no links to files


def test_a_run_that_did_not_end_is_marked(runs, tmp_path):
    """A run stopped short of its limits (killed, still running, or stepped by hand) once
    looked finished in a report: its table row is its last saved iteration. The report says
    which runs did not end; runs that ended, or that were written before run directories
    recorded it (format 2, ``ended`` None), are not marked."""
    stepped = psro.PSRO("kuhn_poker", "exact", "prd", out=tmp_path / "stepped")
    stepped.step()
    stepped.step()
    text = write_report([runs / "nash", tmp_path / "stepped"], tmp_path / "r")[0].read_text()
    assert "**Not ended:** run1 did not end through `run()`" in text
    assert "Not ended" not in write_report([runs / "nash"], tmp_path / "r2")[0].read_text()
    assert psro.load_run(DATA / "format2_exact").ended is None


def test_report_compares_runs(runs, tmp_path):
    md, _ = write_report([runs / "nash", runs / "uniform"], tmp_path / "cmp")
    text = md.read_text()
    assert "| run0 | kuhn_poker | psro, exact, nash | 0 |" in text
    assert "| run1 | kuhn_poker | psro, exact, uniform | 0 |" in text
    assert (tmp_path / "cmp" / "run1_mixtures.png").is_file()


def test_a_report_for_a_paper(tmp_path, capsys):
    """Two games, two methods, three seeds: a panel and a block of table rows per game,
    short labels, deterministic seeds counted once, no per-run pages past four runs."""
    import psro.reports.tables as tables
    from psro.reports import groups

    dirs = []
    for game in ("kuhn_poker", "rps"):
        for solver in ("nash", "uniform"):
            for seed in (0, 1, 2):
                dirs.append(tmp_path / game / solver / str(seed))
                psro.PSRO(game, "exact", solver, seed=seed, out=dirs[-1]).run(iterations=10)
    assert main(["report", *map(str, dirs), "--out", str(tmp_path / "rep")]) == 0
    text = (tmp_path / "rep" / "report.md").read_text()
    assert "| kuhn_poker | psro, exact, nash | 3 (1 distinct) | 10 | < 1e-10 | exact |" in text
    assert "Sections per run are left out for 12 runs" in text
    assert not list((tmp_path / "rep").glob("run*_mixtures.png"))
    tex = (tmp_path / "rep" / "table.tex").read_text().splitlines()
    assert tex[2].startswith("Game & Method & Seeds")
    assert tex[4].startswith(r"kuhn\_poker & psro, exact, nash & 3 (1 distinct)")
    assert "$< 10^{-10}$" in tex[4]
    assert r"\midrule" in tex[6] and tex[7].startswith(r"rps & psro, exact, nash")
    curves = (tmp_path / "rep" / "curves_iteration.csv").read_text()
    assert 'kuhn_poker,"psro, exact, uniform",' in curves
    assert 'rps,"psro, exact, nash",' in curves
    records = [psro.reports.RunRecord(d) for d in dirs[:3]]
    [group] = groups.group_runs(records)
    assert len(group.distinct) == 1 and groups.aggregate(group, "iteration").n == 1
    assert tables.number_text(3e-17, float("nan"), True) == "< 1e-10"
    assert main(["report", *map(str, dirs[:6]), "--out", str(tmp_path / "all"),
                 "--runs"]) == 0
    assert (tmp_path / "all" / "run5_mixtures.png").is_file()


def test_report_errors(runs, tmp_path, capsys):
    with pytest.raises(RunDirectoryError, match="not a run directory"):
        write_report([tmp_path], tmp_path / "out")
    assert main(["report", str(runs / "nash"), str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not a run directory" in err[0]
    assert main(["report", str(runs / "nash")]) == 0
    assert (runs / "nash" / "report" / "report.html").is_file()


def test_tensorboard_scalars_are_opt_in(tmp_path):
    pytest.importorskip("tensorboard")
    psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path / "off").run(iterations=2)
    assert not (tmp_path / "off" / "tensorboard").exists()
    psro.PSRO("kuhn_poker", "exact", "nash", out=tmp_path / "on",
              tensorboard=True).run(iterations=2)
    assert list((tmp_path / "on" / "tensorboard").glob("events.out.tfevents.*"))


def test_report_of_crafted_or_awkward_directories(runs, tmp_path, capsys):
    import json
    import shutil

    import numpy as np

    dollar = tmp_path / "cost$5_$10"  # matplotlib would read $...$ as mathtext
    shutil.copytree(runs / "nash", dollar)
    md, _ = write_report([dollar], tmp_path / "dollar-report")
    assert "cost$5_$10" in md.read_text()
    (tmp_path / "a-file").write_text("x")
    assert main(["report", str(runs / "nash"), "--out", str(tmp_path / "a-file")]) == 2
    assert "cannot write the report" in capsys.readouterr().err
    listed = tmp_path / "listed"
    shutil.copytree(runs / "nash", listed)
    (listed / "config.json").write_text("[1, 2]")
    with pytest.raises(RunDirectoryError, match="must hold a table"):
        write_report([listed], tmp_path / "r1")
    legacy = tmp_path / "legacy"  # format 2: the checkpoint holds the rows
    shutil.copytree(DATA / "format2_exact", legacy)
    with np.load(legacy / "checkpoint.npz") as data:
        arrays = {k: data[k] for k in data.files}
    meta = json.loads(str(arrays["meta"]))
    del meta["metrics"][1]["iteration"]
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez(legacy / "checkpoint.npz", **arrays)
    with pytest.raises(RunDirectoryError, match="metrics row 1 is not the row of iteration 1"):
        write_report([legacy], tmp_path / "r2")


def test_panels_are_one_per_game_with_titles_integer_ticks_headroom_and_an_exact_floor(
        tmp_path):
    import numpy as np
    from matplotlib.ticker import MaxNLocator

    from psro.reports import figures
    from psro.reports.groups import EXACT_FLOOR, Curve

    x = np.arange(5.0)
    exact = Curve(x, np.array([0.5, 0.1, 1e-3, 1e-17, 0.0]), x * np.nan, x * np.nan, 1)
    seeds = Curve(x, np.full(5, 0.2), np.full(5, -0.1), np.full(5, 0.6), 3)
    fig = figures.plot_panels([("kuhn_poker", [("nash", exact, False), ("ppo (n=3)", seeds,
                                                                        False)]),
                               ("leduc_poker", [("nash", exact, False)])],
                              "iteration", "exploitability", "Exploitability by iteration",
                              tmp_path / "e.png", integer_x=True)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["kuhn_poker", "leduc_poker"]
    assert fig._suptitle.get_text() == "Exploitability by iteration"
    for ax in axes:
        assert isinstance(ax.xaxis.get_major_locator(), MaxNLocator)
        low, high = ax.get_ylim()
        assert low < EXACT_FLOOR and high > 0.6 * 2  # nothing on the frame
        assert all(np.min(line.get_ydata()) >= EXACT_FLOOR for line in ax.get_lines()
                   if len(line.get_ydata()) == 5)  # float noise drawn on the floor
        assert any("exact (below 1e-10)" in t.get_text() for t in ax.texts)
    assert (tmp_path / "e.png").read_bytes().startswith(PNG_SIGNATURE)


def test_run_directories_record_their_provenance_and_are_for_sharing(tmp_path, capsys):
    import json
    import os
    import stat

    import numpy as np
    import scipy
    import torch

    out = tmp_path / "r"
    assert main(["run", "--game", "kuhn_poker", "--iterations", "2", "--out", str(out),
                 "--quiet"]) == 0
    made = json.loads((out / "run.json").read_text())["provenance"]
    assert made["packages"]["numpy"] == np.__version__
    assert made["packages"]["scipy"] == scipy.__version__
    assert made["packages"]["torch"] == torch.__version__
    assert made["toolkit"] == "0.1.0" and made["python"]
    root = Path(psro.__file__).resolve().parents[1]
    if (root / ".git").exists():  # the toolkit runs from a checkout: its commit is recorded
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        assert made["git"]["commit"] == head  # it was None since psro/storage/ (a wrong parent)
    else:
        assert made["git"] is None
    mask = os.umask(0o022)
    os.umask(mask)
    assert stat.S_IMODE((out / "config.json").stat().st_mode) == 0o666 & ~mask
    config = json.loads((out / "config.json").read_text())
    assert config["meta_solver_options"] == {"method": "auto"}  # defaults written out
    manifest = json.loads((out / "run.json").read_text())
    manifest["provenance"]["packages"]["torch"] = "1.0.0"
    (out / "run.json").write_text(json.dumps(manifest))
    assert main(["run", "--resume", "--out", str(out), "--iterations", "3"]) == 0
    said = capsys.readouterr().out
    assert f"warning: this run was made with other versions (torch 1.0.0 -> " \
           f"{torch.__version__})" in said
