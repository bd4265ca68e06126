"""The run's log files as views of its records: ``metrics.csv`` is rebuilt from the records
wherever it differs from them (readers and resumes), the other logs must hold at least what the
last record vouches for."""

from __future__ import annotations

import io
from pathlib import Path

from psro.errors import RunDirectoryError
from psro.storage.checkpoint.writer import VIEWS, _Saved
from psro.storage.files import append_bytes, atomic_write_bytes, csv_rows
from psro.storage.lock import DirectoryLock


def rebuild_metrics_csv(path: Path, rows: list[dict], columns: tuple[str, ...]) -> \
        tuple[int, int]:
    """Make ``path/metrics.csv`` what ``rows`` (the records' metrics) give under
    ``columns``: rewritten whole where its bytes differ (cut, lost, or written with shifted
    columns), cut where it holds more (an iteration whose record was never written). Returns
    its length without the last row and with it (what a writer continues from)."""
    whole = csv_rows(rows, header=True, columns=columns)
    last = csv_rows(rows[-1:], header=False, columns=columns)
    before = len(whole) - len(last) if len(rows) > 1 else 0  # no header without a row
    file = path / "metrics.csv"
    if _differs(file, whole):
        atomic_write_bytes(file, lambda h: h.write(whole))
    else:
        append_bytes(file, b"", len(whole))
    return before, len(whole)


def _differs(file: Path, whole: bytes) -> bool:
    """Whether ``file`` (missing: empty) does not begin with ``whole``."""
    with open(file, "rb") if file.is_file() else io.BytesIO() as handle:
        return handle.read(len(whole)) != whole


def repair_metrics_csv(path: Path, rows: list[dict], columns: tuple[str, ...]) -> None:
    """For readers: rebuild the ``metrics.csv`` of the run in ``path``, which no writer holds,
    where its bytes differ from what ``rows`` (the records' metrics) give under ``columns``; a
    run being written, or a directory that cannot be written, is left as it is (the records
    are read either way). A file that agrees is only read: nothing is locked or written."""
    whole = csv_rows(rows, header=True, columns=columns)
    file = path / "metrics.csv"
    try:
        if not _differs(file, whole):
            return
    except OSError:
        return
    lock = DirectoryLock(path)
    try:
        lock.acquire()
    except RunDirectoryError:
        return
    try:
        if _differs(file, whole):  # again, now that no writer can be appending to it
            atomic_write_bytes(file, lambda h: h.write(whole))
    except OSError:
        pass
    finally:
        lock.release()


def check_views(path: Path, last: _Saved | None) -> None:
    """The log files must be the run's own files (not symbolic links) and, given the ``last``
    record, hold at least what the last record vouches for: a log cut short or removed after it was
    written is damage, named here (``psro run --resume`` rebuilds such logs from the records).
    Longer logs are an iteration being written, or one whose record a kill interrupted, which
    a resume cuts. ``metrics.csv``, a table of the records' rows, is not checked here: readers
    rebuild it wherever it differs from them (:func:`repair_metrics_csv`)."""
    for name in VIEWS:
        file = path / name
        if file.is_symlink() or (file.exists() and not file.is_file()):
            raise RunDirectoryError(f"{file} is not a regular file (a symbolic link or a "
                                    f"folder); a run's logs are its own files (it was left "
                                    f"untouched)")
        if last is None or name == "metrics.csv":
            continue
        size = file.stat().st_size if file.is_file() else 0
        if size < last.views_after[name]:
            state = "is missing" if not file.exists() else \
                f"holds {size:,} bytes where the records vouch for {last.views_after[name]:,}"
            raise RunDirectoryError(f"{file} {state}: the log disagrees with the run's records "
                                    f"up to iteration {last.iteration}; psro run --resume "
                                    f"rebuilds it from them")
