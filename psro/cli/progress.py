"""``psro run``'s progress: one fixed-width line per iteration, under a header, that says where
the run stands (in the manner of CleanRL's steps-per-second line and Stable-Baselines3's
tables). Columns:

- ``iter``: the iteration, of the total where an iteration limit ends the run;
- ``pop``: player 0's population size;
- ``time``, ``left``: run time so far (summed over resumes) and the time left: the time budget
  left, or the iterations left at the mean time per iteration so far, whichever is sooner
  (``-`` when only a target exploitability ends the run);
- ``exploit``, ``best``: the meta-policy's exploitability (``n/a`` where payoffs are sampled:
  it is measured when the run stops) and the lowest so far, always in ``0.000e+00`` form so
  the columns never shift;
- ``steps``, ``steps/s``: environment steps so far and this iteration's steps per second of
  the oracle's training (``-`` for oracles that step no environment);
- ``BR/exact``: where payoffs are exact, what the new best responses gained against the
  previous meta-strategy as a share of what exact best responses gain (1.00 for the exact
  oracle; a PPO oracle well below 1 is the bottleneck).

Lines are plain text (no carriage returns or colour), the same on a terminal and in a log
file; a terminal gets the header again every :data:`HEADER_EVERY` lines.
"""

from __future__ import annotations

import math
import sys
from typing import TextIO

HEADER_EVERY = 25
COLUMNS = (("iter", 11), ("pop", 6), ("time", 8), ("left", 8), ("exploit", 11), ("best", 11),
           ("steps", 8), ("steps/s", 9), ("BR/exact", 9))


def duration(seconds: float | None) -> str:
    """Seconds as a short fixed-form text: ``12.3s``, ``12m05s``, ``3h02m``; ``-`` for None."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    seconds = max(0.0, seconds)
    if seconds < 100:
        return f"{seconds:.1f}s"
    if seconds < 3600:
        return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"
    return f"{int(seconds // 3600)}h{int(seconds % 3600 // 60):02d}m"


def count(value: float | None) -> str:
    """A count in three significant figures with k, M or G (``1.83M``); ``-`` for None."""
    if value is None or not math.isfinite(value):
        return "-"
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3e}"


def time_left(row: dict, limits: tuple) -> float | None:
    """Seconds left by the run's limits ``(iterations, budget, target, env-step budget)``: the
    soonest of the budget's remainder, the remaining iterations at the mean time per iteration
    so far, and the remaining env steps at the mean steps per second of run time so far."""
    iterations, budget, _, steps = limits
    elapsed, done = row["wall_time_s"], row["iteration"]
    left = []
    if budget is not None:
        left.append(budget - elapsed)
    if iterations is not None and done > 0:
        left.append(elapsed / done * max(0, iterations - done))
    taken = row.get("env_steps") or 0
    if steps is not None and taken > 0:
        left.append(elapsed / taken * max(0, steps - taken))
    return min(left) if left else None


def response_share(row: dict, previous: dict | None) -> float | None:
    """The new responses' gains over the exact best responses' gains at the previous
    iteration (summed over players); None where it is not measured or there was nothing to
    gain."""
    if previous is None:
        return None
    players = [k[len("response_gain_p"):] for k in row if k.startswith("response_gain_p")]
    found = [row[f"response_gain_p{p}"] for p in players]
    exact = [previous.get(f"gain_p{p}") for p in players]
    if not players or None in found or None in exact or sum(exact) <= 1e-12:
        return None
    return max(0.0, sum(found)) / sum(exact)


class ProgressLine:
    """A callback for :class:`psro.PSRO` that prints the progress line (see the module
    docstring) to ``stream``."""

    def __init__(self, stream: TextIO | None = None):
        self.stream = stream if stream is not None else sys.stdout
        self.lines = 0
        self.best: float | None = None
        self.previous: dict | None = None

    def header(self) -> str:
        """The column titles, aligned with :meth:`line`."""
        return "".join(f"{name:>{width}}" for name, width in COLUMNS)

    def line(self, run, row: dict) -> str:
        """The progress line of ``row``."""
        iterations = run.limits[0]
        if self.previous is None and self.lines == 0:  # a resumed run: what came before
            earlier = [r for r in run.metrics if r["iteration"] < row["iteration"]]
            self.previous = earlier[-1] if earlier else None
            seen = [r["exploitability"] for r in earlier if r.get("exploitability") is not None]
            self.best = min(seen) if seen else None
        value = row.get("exploitability")
        if value is not None:
            self.best = value if self.best is None else min(self.best, value)
        steps, oracle_s = row.get("env_steps") or 0, row.get("oracle_s") or 0.0
        new_steps = steps - self.previous.get("env_steps", 0) if self.previous else None
        rate = new_steps / oracle_s if new_steps and oracle_s > 0 else None
        share = response_share(row, self.previous)
        cells = [f"{row['iteration']}" + (f"/{iterations}" if iterations else ""),
                 str(row["population_size"]), duration(row["wall_time_s"]),
                 duration(time_left(row, run.limits)), _number(value), _number(self.best),
                 count(steps) if steps else "-", count(rate), "-" if share is None
                 else f"{share:.2f}"]
        self.previous = row
        return "".join(f"{cell:>{width}}" for cell, (_, width) in zip(cells, COLUMNS,
                                                                       strict=True))

    def __call__(self, run, row: dict) -> None:
        """Print the row's line (and the header where one is due)."""
        every = HEADER_EVERY if getattr(self.stream, "isatty", lambda: False)() else None
        if self.lines == 0 or (every and self.lines % every == 0):
            print(self.header(), file=self.stream, flush=True)
        print(self.line(run, row), file=self.stream, flush=True)
        self.lines += 1


def limits_text(limits: tuple) -> str:
    """What ends a run, in words."""
    iterations, budget, target, steps = limits
    parts = [f"iteration {iterations}" if iterations is not None else None,
             f"{budget:g} s of run time" if budget is not None else None,
             f"exploitability {target:g} or below" if target is not None else None,
             f"{steps:,} environment steps" if steps is not None else None]
    return "runs until " + " or ".join(p for p in parts if p) + \
        (", whichever comes first" if sum(p is not None for p in parts) > 1 else "")


def variant_hint(run) -> str | None:
    """The suggestion a run's algorithm declares for it (``AlgorithmEntry.hint``), or None."""
    from psro import algorithms

    return algorithms.get(run.config.algorithm).hint(run)


def announce(run, quiet: bool) -> None:
    """The lines a run starts with: where it runs, what ends it, whether the seed matters and
    (on a resume) what changed since it was made."""
    where = getattr(run.backend, "where", None)
    text = where() if where is not None else None  # starts a Ray cluster now: errors first
    if quiet:
        return
    run.notice = lambda line: print(line, flush=True)  # e.g. before the final lower bound
    if text:
        print(text, flush=True)
    print(limits_text(run.limits), flush=True)
    if run.deterministic:
        print(f"seed {run.config.seed} has no effect: this configuration is deterministic "
              f"(oracle {run.config.oracle!r} on exact payoffs); every seed gives this run",
              flush=True)
    hint = variant_hint(run)
    if hint:
        print(hint, flush=True)
    if run.provenance_changes:
        print(f"warning: this run was made with other versions "
              f"({'; '.join(run.provenance_changes)}); its numbers from here on may differ "
              f"from an uninterrupted run", flush=True)
