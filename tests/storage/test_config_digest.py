"""A run directory vouches for its own description: config.json edited after the run (another
seed, another game) is refused by every reader and by a resume, naming the file."""

import pytest

import psro
from psro.cli import main

EDITS = [
    ("another seed", '"seed": 0', '"seed": 1'),
    ("another game", '"kuhn_poker"', '"leduc_poker"'),
    ("another meta-solver", '"meta_solver": "nash"', '"meta_solver": "uniform"'),
]


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    out = tmp_path_factory.mktemp("digest") / "run"
    psro.PSRO("kuhn_poker", oracle="exact", meta_solver="nash", seed=0, out=out).run(
        iterations=2)
    return out


@pytest.mark.parametrize("case,old,new", EDITS, ids=[e[0] for e in EDITS])
def test_an_edited_config_is_refused_by_every_reader(case, old, new, written, tmp_path,
                                                     capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(written, run)
    text = (run / "config.json").read_text()
    assert old in text
    (run / "config.json").write_text(text.replace(old, new))
    before = {p: p.read_bytes() for p in run.rglob("*") if p.is_file()}
    with pytest.raises(psro.RunDirectoryError, match="config.json was changed after the run"):
        psro.load_run(run)
    with pytest.raises(psro.RunDirectoryError, match="config.json was changed after the run"):
        psro.PSRO.resume(run)
    for argv in (["report", str(run), "--out", str(tmp_path / "rep")],
                 ["run", "--resume", "--out", str(run), "--iterations", "4"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "config.json was changed after the run was written" in err
        assert len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in run.rglob("*") if p.is_file()} == before
    (run / "config.json").write_text(text)  # restored: read and resumed again
    assert psro.load_run(run).iteration == 2
    assert psro.PSRO.resume(run).run(iterations=3)[-1]["iteration"] == 3
