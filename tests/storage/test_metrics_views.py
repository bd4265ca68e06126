"""Every tabular view of a run has the columns declared before its first row: metrics.csv read
with csv.DictReader against the records (read here from the record files themselves), for every
algorithm, oracle and evaluator; a row's seconds never exceed its wall time; and a
metrics.csv written with shifted columns by an earlier version is rebuilt by readers and by a
resume."""

import csv
import json
import math
import shutil

import numpy as np
import pytest

import psro
from psro.metrics_row import TIMING_FIELDS

PPO = {"env_steps": 600, "num_envs": 8, "steps_per_update": 128}
SAMPLED = {"max_nodes": 10, "monte_carlo": {"tolerance": 0.2, "max_episodes": 512},
           "lower_bound": {"env_steps": 600}}

RUNS = [  # (label, settings): every algorithm, both oracles, both evaluators
    ("psro exact", {"game": "kuhn_poker", "oracle": "exact"}),
    ("rectified exact", {"game": "kuhn_poker", "oracle": "exact", "algorithm": "rectified"}),
    ("anytime exact", {"game": "kuhn_poker", "oracle": "exact", "algorithm": "anytime"}),
    ("xdo exact", {"game": "kuhn_poker", "oracle": "exact", "algorithm": "xdo"}),
    ("jpsro exact", {"game": "kuhn_poker", "oracle": "exact", "algorithm": "jpsro"}),
    ("diverse exact", {"game": "rps", "oracle": "exact", "algorithm": "diverse"}),
    ("diverse ppo", {"game": "kuhn_poker", "oracle": "ppo", "algorithm": "diverse", "ppo": PPO}),
    ("psro ppo", {"game": "kuhn_poker", "oracle": "ppo", "ppo": PPO}),
    ("pipeline ppo", {"game": "kuhn_poker", "oracle": "ppo", "algorithm": "pipeline",
                      "ppo": PPO}),
    ("anytime ppo rounds", {"game": "kuhn_poker", "oracle": "ppo", "algorithm": "anytime",
                            "anytime_rounds": 2, "anytime_episodes": 64, "ppo": PPO}),
    ("psro ppo sampled", {"game": "kuhn_poker", "oracle": "ppo", "ppo": PPO, **SAMPLED}),
    ("anytime ppo sampled", {"game": "kuhn_poker", "oracle": "ppo", "algorithm": "anytime",
                             "anytime_episodes": 64, "ppo": PPO, **SAMPLED}),
    ("three-player jpsro", {"game": "kuhn_poker(players=3)", "oracle": "exact",
                            "algorithm": "jpsro"}),
]


def _records(run_dir) -> list[dict]:
    """The metrics row of every record file, in iteration order."""
    rows = []
    for file in sorted((run_dir / "iterations").glob("*.npz")):
        with np.load(file, allow_pickle=False) as data:
            rows.append(json.loads(str(data["meta"]))["metrics"])
    return rows


def _cell_matches(cell: str, value) -> bool:
    if value is None:
        return cell == ""
    if isinstance(value, bool) or isinstance(value, str):
        return cell == str(value)
    if isinstance(value, float) and math.isnan(value):
        return cell == "nan"
    return float(cell) == value


@pytest.fixture(scope="module", params=RUNS, ids=[r[0] for r in RUNS])
def written(request, tmp_path_factory):
    label, settings = request.param
    out = tmp_path_factory.mktemp("views") / "run"
    run = psro.PSRO(config=psro.RunConfig(seed=0, **settings), out=out)
    rows = run.run(iterations=2)
    return out, run, rows


def test_metrics_csv_cells_are_the_records(written):
    out, run, rows = written
    records = _records(out)
    assert len(records) == len(rows) == 3
    declared = json.loads((out / "run.json").read_text())["metric_columns"]
    with open(out / "metrics.csv", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0] == declared
    assert all(len(line) == len(declared) for line in table)
    with open(out / "metrics.csv", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert len(read) == len(records)
    for cells, record in zip(read, records, strict=True):
        assert set(record) == set(declared)  # every row holds every declared column
        for key in declared:
            assert _cell_matches(cells[key], record[key]), (key, cells[key], record[key])


def test_rows_hold_exactly_the_declared_columns(written):
    _, run, rows = written
    for row in rows:
        assert list(row) == list(run.columns)


def test_a_rows_seconds_never_exceed_its_wall_time(written):
    _, _, rows = written
    previous = 0.0
    for row in rows:
        spent = sum(row[key] for key in TIMING_FIELDS)
        assert spent <= row["wall_time_s"] - previous + 1e-6, row
        previous = row["wall_time_s"]


def _old_style_csv(rows: list[dict]) -> str:
    """metrics.csv as versions before declared columns wrote it: the header from iteration 0's
    keys, each later row under its own keys (shifted where they differ)."""
    header = list(rows[0])
    cell = lambda v: "" if v is None else (repr(v) if isinstance(v, float) else str(v))  # noqa: E731
    lines = [",".join(header)] + [",".join(cell(v) for v in row.values()) for row in rows]
    return "\n".join(lines) + "\n"


def _as_old_run(out):
    """Turn a run written now into one as an earlier version wrote it: rows without the
    columns they did not hold, a shifted metrics.csv, no declared columns in run.json."""
    manifest = json.loads((out / "run.json").read_text())
    del manifest["metric_columns"]
    (out / "run.json").write_text(json.dumps(manifest))
    rows = [{k: v for k, v in r.items() if v is not None or not k.startswith("response_gain")}
            for r in _records(out)]
    (out / "metrics.csv").write_text(_old_style_csv(rows))
    return [len(line) for line in csv.reader(open(out / "metrics.csv"))]


def test_a_shifted_metrics_csv_is_rebuilt_by_readers_and_by_resume(tmp_path):
    out = tmp_path / "run"
    psro.PSRO("kuhn_poker", oracle="exact", out=out).run(iterations=3)
    widths = _as_old_run(out)
    assert widths[1] != widths[2]  # the defect: iteration 0 lacks the response gains
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)

    loaded = psro.load_run(out)  # a reader rebuilds the view from the records
    with open(out / "metrics.csv", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert [int(r["entries_evaluated"]) for r in read] == \
        [r["entries_evaluated"] for r in loaded.metrics] == [1, 3, 5, 7]
    assert [r["env_steps"] for r in read] == ["0"] * 4
    assert read[0]["response_gain_p0"] == ""

    run = psro.PSRO.resume(copy)  # so does a resume, and the run goes on in the same columns
    run.run(iterations=5)
    with open(copy / "metrics.csv", newline="") as handle:
        table = list(csv.reader(handle))
    assert len({len(line) for line in table}) == 1 and len(table) == 1 + 6
    assert table[0] == json.loads((copy / "run.json").read_text())["metric_columns"]
    records = _records(copy)
    with open(copy / "metrics.csv", newline="") as handle:
        for cells, record in zip(csv.DictReader(handle), records, strict=True):
            assert all(_cell_matches(cells[k], v) for k, v in record.items())


def test_a_key_no_part_declared_is_refused_before_anything_is_written(tmp_path):
    run = psro.PSRO("kuhn_poker", oracle="exact", out=tmp_path / "run")
    run.run(iterations=1)
    before = (tmp_path / "run" / "metrics.csv").read_bytes()
    run.columns = tuple(c for c in run.columns if c != "nash_conv")
    run.writer.columns = run.columns
    with pytest.raises(ValueError, match="nash_conv"):
        run.run(iterations=2)
    assert (tmp_path / "run" / "metrics.csv").read_bytes() == before


def test_a_cell_holding_a_comma_is_quoted():
    from psro.storage.files import csv_rows

    text = csv_rows([{"a": "x,y", "b": 'say "hi"'}], header=True, columns=("a", "b", "c"))
    assert list(csv.reader(text.decode().splitlines())) == [["a", "b", "c"],
                                                              ["x,y", 'say "hi"', ""]]


def test_every_declared_column_has_a_meaning_for_the_guide():
    from psro.column_catalogue import column_writers
    from psro.metrics_row import MEANINGS

    writers = column_writers()
    assert set(writers) == set(MEANINGS)
    assert writers["restricted_actions"] == ["xdo"] and writers["gap"] == ["jpsro"]
    assert writers["gain_std_err_p*"] == ["sampled payoffs"]
    assert writers["exploitability"] == ["every run"]
