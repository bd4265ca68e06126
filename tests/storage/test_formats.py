"""Run directories written by earlier versions (formats 1 and 2) load, report and resume."""

import shutil

import pytest
from conftest import DATA, as_written_before_config_digests, numbers

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




def test_a_run_of_the_catalogues_old_blotto_name_loads_and_resumes_as_blotto_margin(tmp_path):
    """Runs written before the catalogue's ``blotto`` became ``blotto_margin`` (their run.json
    has no catalogue_version) name the catalogue game, not OpenSpiel's ``blotto`` that the
    name loads today: they load, report and resume as the game they ran."""
    import json

    import psro

    whole = psro.PSRO("blotto_margin(coins=4,fields=3)", "exact", "nash").run(iterations=3)
    out = tmp_path / "old"
    psro.PSRO("blotto_margin(coins=4,fields=3)", "exact", "nash", out=out).run(iterations=1)
    as_written_before_config_digests(out)
    config, manifest = out / "config.json", out / "run.json"
    config.write_text(json.dumps({**json.loads(config.read_text()),
                                  "game": "blotto(coins=4,fields=3)"}))
    written = json.loads(manifest.read_text())
    assert written.pop("catalogue_version") == 2
    manifest.write_text(json.dumps(written))
    assert psro.load_run(out).config.game == "blotto_margin(coins=4,fields=3)"
    resumed = psro.PSRO.resume(out)
    rows = resumed.run(iterations=3)
    assert [r["exploitability"] for r in rows] == [r["exploitability"] for r in whole]
