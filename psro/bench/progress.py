"""A suite's progress lines (``psro bench``): which run of how many, the suite's time so far and
the time left, then each run's outcome; with several runs at once (``--jobs``), also how many
are running, done and left, and where each runs."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TextIO


class SuiteProgress:
    """The suite's progress lines. The time left sums, over the runs not ended, how long the
    runs of the same game and method took (else of the same game): "about" that much; runs of
    games not timed yet count with their budgets, "at most". A run that ended in an earlier
    call counts with its recorded wall time (one resumed: the longer of that and this call's).
    With ``concurrency`` runs at once the sum is divided by it (the rate of the suite).

    One run at a time, a run's lines read ``[3/8] game · method · seed 1  (suite 4m, about 6m
    left)`` and, indented, its outcome. Several at once, each line names its run, and a run's
    first line says where it runs and how many runs are running, done and left."""

    def __init__(self, runs: list, stream: TextIO | None = None, concurrency: int = 1):
        import sys

        self.runs, self.stream = runs, stream or sys.stdout
        self.concurrency = concurrency
        self.start = time.perf_counter()
        self.began: dict[int, float] = {}
        self.took: dict[tuple[str, str], list[float]] = {}
        self.done: set[int] = set()

    def left(self, k: int) -> tuple[float, float, int]:
        """For the runs from ``k`` on: the seconds the timed ones should take (from the times
        of their game's runs), and the budgets and count of the others."""
        return self.left_of(range(k, len(self.runs)))

    def left_of(self, indices: Iterable[int]) -> tuple[float, float, int]:
        """:meth:`left` for the runs at ``indices``."""
        timed, budgets, untimed = 0.0, 0.0, 0
        for run in (self.runs[k] for k in indices):
            same = self.took.get((run.game.label, run.method.label))
            seen = same or [t for (g, _), ts in self.took.items() if g == run.game.label
                            for t in ts]
            if seen:
                timed += min(run.game.time_budget_s, sum(seen) / len(seen))
            else:
                budgets += run.game.time_budget_s
                untimed += 1
        return timed, budgets, untimed

    def left_text(self, k: int) -> str:
        """The time left in words: "about 6m left", "at most 3h left", or both ("about 6m
        left, and at most 3h for 6 runs of games not timed yet")."""
        if self.concurrency == 1:
            return self._in_words(*self.left(k))
        return self._in_words(*self.left_of(i for i in range(len(self.runs))
                                            if i not in self.done))

    def _in_words(self, timed: float, budgets: float, untimed: int) -> str:
        from psro.cli.progress import duration

        timed, budgets = timed / self.concurrency, budgets / self.concurrency
        if not untimed:
            return f"about {duration(timed)} left"
        if timed == 0:
            return f"at most {duration(budgets)} left"
        return f"about {duration(timed)} left, and at most {duration(budgets)} for " \
               f"{untimed} run{'s' if untimed > 1 else ''} of games not timed yet"

    def counts(self) -> str:
        """``running 2, done 3, left 5`` (runs)."""
        running = len(set(self.began) - self.done)
        left = len(self.runs) - len(self.done) - running
        return f"running {running}, done {len(self.done)}, left {left}"

    def starting(self, k: int, where: str = "") -> None:
        """Before run ``k`` (0-based) starts; ``where`` it runs, in words (several at once)."""
        from psro.cli.progress import duration

        now = time.perf_counter()
        again = k in self.began and k not in self.done  # its node lost: it starts elsewhere
        self.began.setdefault(k, now)
        head = f"[{k + 1}/{len(self.runs)}] {self.runs[k].name}"
        if again:
            print(f"{head}: started again on {where or 'another worker'}, from its last "
                  f"saved iteration (its node or worker process was lost)", file=self.stream,
                  flush=True)
            return
        if self.concurrency == 1:
            print(f"{head}  (suite {duration(now - self.start)}, {self.left_text(k)})",
                  file=self.stream, flush=True)
            return
        print(f"{head}: started{' on ' + where if where else ''}  ({self.counts()}; suite "
              f"{duration(now - self.start)}, {self.left_text(k)})", file=self.stream,
              flush=True)

    def finished(self, k: int, row: dict, extra: str = "", ran: bool = True) -> None:
        """After run ``k``, with its last metrics row (``ran``: False where it was skipped)."""
        run, recorded = self.runs[k], float(row.get("wall_time_s") or 0.0)
        began = self.began.get(k, time.perf_counter())
        took = max(recorded, time.perf_counter() - began) if ran else recorded
        self.took.setdefault((run.game.label, run.method.label), []).append(took)
        self.done.add(k)
        value = row.get("exploitability")  # none where the suite measures the bound
        kind = " (lower bound)" if row.get("exploitability_kind") == \
            "approximate_lower_bound" else ""
        shown = "" if value is None else f"exploitability {value:.4g}{kind}, "
        outcome = f"{shown}iteration {row['iteration']}, {row['wall_time_s']:.1f} s, " \
                  f"{row.get('env_steps') or 0:,} env steps{extra}" \
                  f"{'' if ran else ' (finished earlier)'}"
        if self.concurrency == 1:
            print(f"      {outcome}", file=self.stream, flush=True)
        else:
            print(f"[{k + 1}/{len(self.runs)}] {run.name}: {outcome}  ({self.counts()})",
                  file=self.stream, flush=True)

    def note(self, text: str) -> None:
        """A line of its own (reference lines measured, a run resumed elsewhere)."""
        print(f"      {text}", file=self.stream, flush=True)
