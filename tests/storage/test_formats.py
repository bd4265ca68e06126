"""Run directories written by earlier versions (formats 1 and 2) load, report and resume."""

import shutil

import pytest
from conftest import DATA, numbers

import psro


# -- earlier run-directory formats ------------------------------------------------------------
@pytest.mark.parametrize("name", ["format2_exact", "format2_ppo", "format1_ppo"])
def test_runs_of_formats_1_and_2_load_report_and_resume(name, tmp_path):
    from psro.reports import write_report

    directory = tmp_path / name
    shutil.copytree(DATA / name, directory)
    loaded = psro.load_run(directory)
    with open(DATA / name / "metrics.jsonl") as handle:
        assert len(loaded.metrics) == sum(1 for _ in handle)
    assert loaded.meta_policy() is not None
    md, _ = write_report([directory], tmp_path / "report")
    assert f"| {loaded.metrics[-1]['iteration']} |" in md.read_text()
    resumed = psro.PSRO.resume(directory)
    rows = resumed.run(iterations=len(loaded.metrics) + 1)
    assert len(rows) == len(loaded.metrics) + 2
    assert numbers(rows[:len(loaded.metrics)]) == numbers(loaded.metrics)
    again = psro.load_run(directory)  # converted to records: read back the same
    assert numbers(again.metrics) == numbers(rows)
    assert not (directory / "checkpoint.npz").exists()
    if name == "format2_exact":  # exact numbers are the same as a fresh run's
        fresh = psro.PSRO("kuhn_poker", "exact", "nash").run(iterations=len(rows) - 1)
        # the old format's rows predate the population-diversity columns
        assert [{k: v for k, v in row.items() if not k.startswith("diversity_p")}
                for row in numbers(fresh)] == \
            [{k: v for k, v in row.items() if not k.startswith("diversity_p")}
             for row in numbers(rows)]


