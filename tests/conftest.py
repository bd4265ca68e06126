"""What the tests share: the project's paths, the numbers of a run's rows (what must not change
between two runs that ought to agree), and the games most tests play."""

import signal
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
"""The checkout."""
DATA = Path(__file__).resolve().parent / "data"
"""Run directories written by earlier versions (formats 1 and 2)."""
sys.path.insert(0, str(ROOT))

TIMING = frozenset({"wall_time_s", "oracle_s", "evaluation_s", "meta_solver_s",
                    "exploitability_s", "write_s"})
"""Metrics that are seconds: they differ between runs whose numbers agree."""


def pytest_collection_modifyitems(session, config, items):
    """Files that hold a test marked slow first (each file's tests keep their order): with
    ``make test``'s two workers, a file at a time each, the longest files then start first and
    the suite does not end on one worker running them while the other idles."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow)


def numbers(rows: list[dict]) -> list[dict]:
    """A run's metrics rows without the seconds, and without the responses' gains (a column
    that runs of formats 1 and 2 predate): what two runs that ought to agree must share."""
    return [{k: v for k, v in row.items() if k not in TIMING
             and not k.startswith("response_gain_p")} for row in rows]


def blas_threads() -> list[int]:
    """The thread count of every BLAS library loaded in this process (threadpoolctl)."""
    from threadpoolctl import threadpool_info
    return [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]


def random_kuhn_profile(tree, seed: int) -> list:
    """One random tabular policy per player of Kuhn poker's walked ``tree`` (every action
    with probability at least 0.1 / 1.1), seeded."""
    import numpy as np

    from psro.extensive_form.policies import TabularPolicy

    rng = np.random.default_rng(seed)
    out = []
    for p in range(2):
        probs = tree.uniform_policy(p) * rng.uniform(0.1, 1, (tree.players[p].num_infosets, 2))
        out.append(TabularPolicy(p, probs / probs.sum(axis=1, keepdims=True)))
    return out


@pytest.fixture(scope="session")
def kuhn():
    """Kuhn poker and its walked tree."""
    import pyspiel

    from psro.extensive_form.sequence_form import SequenceFormGame

    game = pyspiel.load_game("kuhn_poker")
    return game, SequenceFormGame(game)


def as_written_before_config_digests(run_dir) -> None:
    """Make the run directory ``run_dir`` as versions before records held the SHA-256 of
    ``config.json`` wrote it: every record without ``config_sha256`` (its checksum made anew),
    so that a test may edit its config.json as an older version would have written it."""
    import io
    import json

    import numpy as np

    from psro.storage.files import checksum

    for file in sorted(Path(run_dir, "iterations").glob("*.npz")):
        with np.load(file, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(str(arrays.pop("meta")))
        meta.pop("checksum")
        meta.pop("config_sha256", None)
        meta["checksum"] = checksum(meta, arrays)
        buffer = io.BytesIO()
        np.savez(buffer, meta=np.array(json.dumps(meta)), **arrays)
        file.write_bytes(buffer.getvalue())


def interruptible() -> None:
    """``preexec_fn`` of a command a test interrupts with Ctrl-C: SIGINT's default action in
    the child, as a terminal's command has it (a test suite started in the background by a
    non-interactive shell inherits SIGINT ignored, and Python keeps ignoring it: the test
    would measure the shell, not the command)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
