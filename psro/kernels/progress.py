"""Where a long exact evaluation has got to, kept in a file so that an interrupted one resumes.

A kernel (:mod:`psro.kernels`) sums each player's members one after the other into that
player's sequence form; asking a network at every information set is most of the time (from
seconds to tens of seconds a network on the large games: docs/benchmarks.md), so a meta-policy
of 85 members a player takes half an hour or more. :class:`MixtureProgress` saves, after a
member (at most every ``every_s`` seconds), the finished players' sums, the current player's
partial sum and the next member to ask; a new evaluation of the same mixtures with the same
file continues from there: its sums are the uninterrupted one's bit for bit (they are added in
the same order), and so is its result where the kernel's walk is deterministic (the placement
games' walk on several threads may differ in the last bit from one walk to the next,
interrupted or not). The file names what it holds by a ``key`` the caller gives (e.g. a run's
iteration and seed with the mixtures' weights); a file with another key, or one that cannot be
read, is ignored and replaced.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np

from psro.storage.files import atomic_write_bytes


class MixtureProgress:
    """Progress of one exact evaluation, saved to ``path`` (``.npz``) under ``key``.

    A kernel calls :meth:`resume` once, :meth:`member_done` after each member it summed,
    :meth:`sums_done` when every player's sum is made (an evaluation stopped in the walk that
    follows asks no member again) and :meth:`finished` when its result is made (the file is
    then removed)."""

    def __init__(self, path: str | Path, key: str, every_s: float = 30.0):
        self.path = Path(path)
        self.key = str(key)
        self.every_s = float(every_s)
        """Least seconds between two saves (the first member done is always saved)."""
        self._saved_at: float | None = None

    @classmethod
    def of_mixtures(cls, path: str | Path, name: str, mixtures: list,
                    every_s: float = 30.0) -> MixtureProgress:
        """The progress of an evaluation of a run's meta-policy: ``key`` is ``name`` (what
        fixes the members: the run and its iteration) followed by the SHA-256 of the weights
        ``mixtures`` (per player, exactly, as JSON)."""
        weights = json.dumps([np.asarray(m, dtype=float).tolist() for m in mixtures])
        return cls(path, name + hashlib.sha256(weights.encode()).hexdigest(), every_s)

    def resume(self) -> tuple[list[np.ndarray], int, np.ndarray | None, int]:
        """What an earlier evaluation left: (the finished players' sums, in player order; the
        next member of the current player; that player's partial sum, None to start afresh;
        information sets asked so far). Nothing (``[], 0, None, 0``) where there is no file,
        its key differs or it cannot be read."""
        if not self.path.is_file():
            return [], 0, None, 0
        try:
            with np.load(self.path, allow_pickle=False) as saved:
                if str(saved["key"]) != self.key:
                    return [], 0, None, 0
                done = [np.array(saved[f"done_{p}"]) for p in range(int(saved["players"]))]
                partial = np.array(saved["partial"]) if bool(saved["has_partial"]) else None
                return done, int(saved["member"]), partial, int(saved["asked"])
        except (OSError, ValueError, KeyError):
            return [], 0, None, 0

    def member_done(self, done: list[np.ndarray], member: int, partial: np.ndarray,
                    asked: int) -> None:
        """Save that the current player (``len(done)``) has summed its members before index
        ``member`` into ``partial``, ``done`` holding the players before it; skipped if the
        last save was less than ``every_s`` seconds ago."""
        now = time.perf_counter()
        if self._saved_at is not None and now - self._saved_at < self.every_s:
            return
        self._save(done, asked, member=member, partial=partial)

    def sums_done(self, sums: list[np.ndarray], asked: int) -> None:
        """Save every player's finished sum (always, whenever the last save was)."""
        self._save(sums, asked)

    def _save(self, done: list[np.ndarray], asked: int, member: int = 0,
              partial: np.ndarray | None = None) -> None:
        """Write the file: the players' sums ``done``, then (``partial`` not None) the next
        player's partial sum up to its member ``member``."""
        arrays = {f"done_{p}": a for p, a in enumerate(done)}
        if partial is not None:
            arrays["partial"] = partial
        atomic_write_bytes(self.path, lambda h: np.savez(
            h, key=np.array(self.key), players=np.array(len(done)), member=np.array(member),
            has_partial=np.array(partial is not None), asked=np.array(asked), **arrays))
        self._saved_at = time.perf_counter()

    def finished(self) -> None:
        """The evaluation's result is made: the file is no longer needed."""
        self.path.unlink(missing_ok=True)


def summed_mixtures(seats, progress: MixtureProgress | None, size, add_member
                    ) -> tuple[list[np.ndarray], int]:
    """Each player's sum over its members, resuming from and saving to ``progress`` (None:
    neither; the kernel calls its :meth:`~MixtureProgress.finished` once its result is made).
    ``size(player)`` is the shape of a player's sum; ``add_member(player, policy, weight,
    total)`` adds one member (weight above 0) into ``total`` in place and returns the
    information sets it asked. Returns the sums and the information sets asked in all (an
    earlier, interrupted evaluation's included)."""
    done, first, partial, asked = progress.resume() if progress else ([], 0, None, 0)
    sums = list(done)
    for player in range(len(sums), len(seats)):
        total = partial if partial is not None and player == len(done) else np.zeros(size(player))
        start = first if player == len(done) else 0
        for index, (policy, weight) in enumerate(seats[player]):
            if index < start or weight == 0:
                continue
            asked += add_member(player, policy, weight, total)
            if progress is not None:
                progress.member_done(sums, index + 1, total, asked)
        sums.append(total)
    if progress is not None and len(done) < len(seats):
        progress.sums_done(sums, asked)
    return sums, asked


RUN_PROGRESS_FILE = "exact_evaluation.progress.npz"
"""The progress file of a run's exact evaluation, at the top of its run directory."""


def run_progress(run_directory: str | Path | None, iteration: int,
                 mixtures: list) -> MixtureProgress | None:
    """The progress of the exact evaluation of a run's meta-policy at ``iteration``
    (``mixtures``: per player, its members' weights), kept in :data:`RUN_PROGRESS_FILE` in
    ``run_directory`` (None: kept nowhere, None returned). The run's members at an iteration
    are fixed, so the key is the iteration and the weights (exactly, as JSON): the run's own
    evaluation and ``psro exploitability --run`` of the same iteration continue each
    other's."""
    if run_directory is None:
        return None
    return MixtureProgress.of_mixtures(Path(run_directory) / RUN_PROGRESS_FILE,
                                       f"iteration {int(iteration)} ", mixtures)


__all__ = ["RUN_PROGRESS_FILE", "MixtureProgress", "run_progress", "summed_mixtures"]
