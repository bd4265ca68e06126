"""Pure strategies (an exact best response's one-hot table) are recorded as one action per
information set, a hundredth of the dense table, and read back to the same values; mixed tables
(xdo's restricted equilibria) stay dense."""

import numpy as np

import psro


def test_pure_members_are_recorded_small_and_read_back_exactly(tmp_path):
    run = psro.PSRO("liars_dice(dice_sides=4)", "exact", algorithm="xdo", out=tmp_path / "r")
    run.run(iterations=3)
    loaded = psro.load_run(tmp_path / "r")
    kinds = {"pure": 0, "mixed": 0}
    for mine, theirs in zip(run.population, loaded.population, strict=True):
        for a, b in zip(mine, theirs, strict=True):
            assert np.array_equal(a.probs, b.probs)
            pure = np.all((a.probs == 0) | (a.probs == 1))
            kinds["pure" if pure else "mixed"] += 1
    assert kinds["pure"] >= 4 and kinds["mixed"] >= 2  # best responses and restricted solves
    with np.load(tmp_path / "r" / "iterations" / "000001.npz") as record:
        pure = [k for k in record.files if k.startswith("pure_") and not k.endswith("_width")]
        dense = [k for k in record.files if k.startswith("table_")]
        assert pure and all(record[k].dtype == np.int16 for k in pure)
        assert all(record[k].dtype == np.float64 for k in dense)
    resumed = psro.PSRO.resume(tmp_path / "r")
    assert [r["exploitability"] for r in resumed.run(iterations=4)][:4] == \
        [r["exploitability"] for r in run.metrics]
