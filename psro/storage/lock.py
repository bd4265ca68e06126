"""The lock a writer of a folder holds (a run, a report): one holder at a time, released by the
operating system however the holder dies."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from psro.errors import RunDirectoryError


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return None


class DirectoryLock:
    """An exclusive OS lock (``flock``) on ``DIR/.lock``, held while a run writes ``DIR``. The
    operating system releases it when the process dies, however it dies; a holder that ends
    normally removes the file (a holder checks that the file it locked is still the one at
    ``DIR/.lock``, so that removing it never lets two holders in)."""

    def __init__(self, directory: Path, holder: str = "run"):
        self.path = Path(directory) / ".lock"
        self.holder = holder
        """What holds such a lock, in words ("run", "report")."""
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock (no-op when held); :class:`RunDirectoryError` when another run holds
        it."""
        while self._fd is None:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
            except OSError as err:
                raise RunDirectoryError(f"cannot lock {self.path.parent}: "
                                        f"{err.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunDirectoryError(f"{self.path.parent} is in use by another "
                                        f"{self.holder} (it holds the directory's lock); wait "
                                        f"for it to end or use another directory") from None
            if _inode(self.path) == os.fstat(fd).st_ino:
                self._fd = fd
            else:  # its holder removed it as we opened it: lock the file there now
                os.close(fd)

    def release(self) -> None:
        """Give the lock up and remove its file (no-op when not held)."""
        if self._fd is not None:
            try:
                self.path.unlink()
            except OSError:
                pass  # a read-only folder: the file stays, unlocked
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.release()
