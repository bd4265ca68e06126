"""Pure strategies (an exact best response's one-hot table) are recorded as one action per
information set, a hundredth of the dense table, and read back to the same values; mixed tables
with few nonzero entries (xdo's restricted equilibria) as those entries; others stay dense."""

import numpy as np
import pytest

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
    with np.load(tmp_path / "r" / "iterations" / "000002.npz") as record:
        assert any(k.startswith("sparse_") for k in record.files)  # a mixed equilibrium
    resumed = psro.PSRO.resume(tmp_path / "r")
    assert [r["exploitability"] for r in resumed.run(iterations=4)][:4] == \
        [r["exploitability"] for r in run.metrics]


@pytest.mark.parametrize("zeros", [0.0, 0.5, 0.9])
def test_every_form_of_table_reads_back_the_same_values(zeros):
    from psro.storage.checkpoint.members import table_arrays_of, table_from_arrays

    rng = np.random.default_rng(int(zeros * 10))
    probs = rng.random((50, 7)) * (rng.random((50, 7)) > zeros)
    probs[probs.sum(axis=1) == 0, 0] = 1.0
    probs /= probs.sum(axis=1, keepdims=True)
    arrays = table_arrays_of(probs, 1, 3)
    assert any(k.startswith("sparse_") for k in arrays) == (zeros == 0.9)
    assert np.array_equal(table_from_arrays(arrays, 1, 3), probs)
