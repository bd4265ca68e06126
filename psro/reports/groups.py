"""Runs grouped by configuration, labelled, and aggregated across seeds (for ``psro report``).

Runs whose configurations differ only in ``seed`` (and in how long or where they ran:
``iterations``, ``time_budget_s``, ``target_exploitability``, ``backend``, ``workers``,
``ray_address``, ``tensorboard``), or in settings no part of them reads, form one group: the
same method, several seeds. Groups are shown per game (one panel, one block of table rows);
a group's label is what tells it apart from the other groups of its game, short: the values
of ``algorithm``, ``oracle`` and ``meta_solver`` where they differ (or some groups lack one),
``key=value`` for other settings (``psro, nash``; ``prd, env_steps=2000``), or with one group
its algorithm, oracle and meta-solver. Seeds whose runs are identical (a deterministic
configuration) count as one distinct run.

Aggregation: at each point of the x-axis (iteration, wall time or environment steps), the mean
exploitability of the group's seeds and a 95% confidence interval for it by Student's t,
``mean +- t(0.975, n - 1) * s / sqrt(n)`` (``s`` the sample standard deviation; no interval for
one seed). Runs of unequal length are aligned without inventing values: a run's value at time
``x`` is the exploitability of its last iteration finished by ``x`` (a step function, never
interpolated between iterations), and the x-axis ends where the shortest run of the group
ends (no extrapolation), so every point averages every seed.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from psro.errors import RunDirectoryError

NOT_METHOD = ("seed", "iterations", "time_budget_s", "target_exploitability",
              "env_step_budget", "backend", "workers", "ray_address", "tensorboard")
"""Config keys that do not change what a run computes (grouping ignores them)."""
X_AXES = {"iteration": "iteration", "wall_time_s": "wall time (s)",
          "env_steps": "environment steps"}
POINTS = 200
"""Points of an aggregated curve on a continuous axis (wall time, environment steps), evenly
and log-spaced each, where the runs have more than ``MAX_OWN_POINTS`` points of their own."""
MAX_OWN_POINTS = 2000
"""Up to this many distinct points, a curve is evaluated at the runs' own points."""
EXACT_FLOOR = 1e-10
"""Exploitability below this is float noise around an exact equilibrium: drawn at this floor
and written as ``< 1e-10`` in reports."""


@dataclass
class RunGroup:
    """Runs of one configuration (``records``, :class:`psro.reports.RunRecord`), its ``label``
    and ``key`` (the configuration without seed and stopping rules, flattened)."""

    key: dict
    records: list = field(default_factory=list)
    label: str = ""

    @property
    def seeds(self) -> list:
        """Each run's seed, in run order."""
        return [rec.config.get("seed") for rec in self.records]

    @property
    def game(self) -> str:
        """The game of the group's runs."""
        return str(self.records[0].config.get("game"))

    @property
    def distinct(self) -> list:
        """The runs whose numbers differ: of runs with identical exploitability at every
        iteration (seeds of a deterministic configuration), the first. Curves and intervals
        are over these, so identical seeds never make a band of zero width."""
        kept, seen = [], set()
        for rec in self.records:
            numbers = tuple((r.get("iteration"), r.get("exploitability"), r.get("nash_conv"))
                            for r in rec.metrics)
            if numbers not in seen:
                seen.add(numbers)
                kept.append(rec)
        return kept


@dataclass
class Curve:
    """An aggregated curve: ``x``, ``mean``, interval ``low``/``high`` (NaN with one seed)
    and the number of seeds ``n``."""

    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n: int


def flatten(config: dict, prefix: str = "") -> dict:
    """``{"ppo": {"env_steps": 1}}`` -> ``{"ppo.env_steps": 1}`` (values as JSON text)."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, dict):
            flat.update(flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = json.dumps(value)
    return flat


def method_key(rec) -> dict:
    """What identifies a run's method: its flattened configuration without the keys of
    :data:`NOT_METHOD` and without the settings no part of the run reads (e.g. PPO options
    written out for an exact run by an earlier version), as its parts declare them."""
    unread = _unread(rec.config, getattr(rec, "evaluation", "exact"))
    return {k: v for k, v in flatten(rec.config).items()
            if k not in NOT_METHOD and k.split(".")[0] not in unread}


def _unread(config: dict, evaluation: str) -> set[str]:
    from psro.build import PART_SETTINGS, settings_read
    from psro.config import RunConfig
    from solvers import ToolkitError

    try:
        known = {k: v for k, v in config.items() if k in RunConfig.__dataclass_fields__}
        return set(PART_SETTINGS) - settings_read(RunConfig.from_dict(known), evaluation)
    except (ToolkitError, KeyError, TypeError):  # an oracle registered elsewhere: keep all
        return set()


def group_runs(records: list, labels: dict | None = None) -> list[RunGroup]:
    """Group ``records`` by method (:func:`method_key`; first appearance order) and label
    each group. ``labels`` maps a run's path (as given or resolved) to a label for its
    group. :class:`~psro.errors.RunDirectoryError` (in one line, naming the runs) for two runs
    of one group with the same seed (they are not two seeds; the same run given twice counts
    once), two labels for one group, or one label for two groups."""
    groups: list[RunGroup] = []
    for rec in records:
        key = method_key(rec)
        group = next((g for g in groups if g.key == key), None)
        if group is None:
            group = RunGroup(key)
            groups.append(group)
        if any(_same_run(rec, other) for other in group.records):
            continue
        group.records.append(rec)
    for group in groups:
        _check_seeds(group)
    _label(groups)
    _apply_labels(groups, labels or {})
    return groups


def _same_run(a, b) -> bool:
    try:
        return a.path.resolve() == b.path.resolve()
    except OSError:
        return str(a.path) == str(b.path)


def _check_seeds(group: RunGroup) -> None:
    seen: dict = {}
    for rec in group.records:
        seed = rec.config.get("seed")
        if seed in seen:
            raise RunDirectoryError(f"runs {seen[seed].path} and {rec.path} have the same "
                                    f"configuration and seed {seed}: they are not two seeds "
                                    f"(report them separately)")
        seen[seed] = rec


def _apply_labels(groups: list[RunGroup], labels: dict) -> None:
    for group in groups:
        given = {labels[path.rstrip("/")] for rec in group.records
                 for path in (str(rec.path), str(rec.path.resolve()))
                 if path.rstrip("/") in labels}
        if len(given) > 1:
            raise RunDirectoryError(f"--label gives one group (the runs of {group.label}) "
                                    f"two labels: {', '.join(sorted(given))}; label each group "
                                    f"once")
        if given:
            group.label = given.pop()
    names = [(g.game, g.label) for g in groups]  # labels tell groups apart within a game
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice is not None:
        raise RunDirectoryError(f"two groups of {twice[0]} would both be labelled "
                                f"{twice[1]!r}; give each group its own --label")


NAMED = ("algorithm", "oracle", "meta_solver")
"""Keys whose values speak for themselves in a label (``psro``, not ``algorithm=psro``). One
that some groups of a game lack (``xdo`` reads no meta-solver) still tells the others apart:
``psro, latest`` beside ``xdo``, not ``psro``."""
ALWAYS = ("algorithm", "oracle")
"""Keys every label shows, differing or not: a row or curve always says which algorithm and
which oracle made it (``psro, ppo, nash`` and ``psro, exact, nash`` never read alike)."""


def _label(groups: list[RunGroup]) -> None:
    """Label each group by its algorithm and oracle (:data:`ALWAYS`) and what tells it apart
    from the other groups of its game."""
    for game in dict.fromkeys(g.game for g in groups):
        same = [g for g in groups if g.game == game]
        keys = [k for k in NAMED if any(k in g.key for g in same)] + sorted(
            {k for g in same for k in g.key} - set(NAMED) - {"game"})
        differing = [k for k in keys if k in ALWAYS or
                     len({g.key.get(k) for g in same if k in NAMED or k in g.key}) > 1]
        labels = [_short(g.key, differing) for g in same]
        if len(set(labels)) < len(labels):  # told apart only by a setting some lack
            differing = [k for k in keys
                         if k in ALWAYS or len({g.key.get(k) for g in same}) > 1]
            labels = [_short(g.key, differing, unset=True) for g in same]
        if len(differing) == len([k for k in ALWAYS if k in keys]):  # nothing else differs
            labels = [_short(g.key, [k for k in NAMED if k in g.key]) for g in same]
        for group, label in zip(same, labels, strict=True):
            group.label = label or "(defaults)"


def _short(key: dict, shown: list[str], unset: bool = False) -> str:
    cells = []
    for k in shown:
        if k not in key and not unset:
            continue
        value = _plain(key.get(k))
        cells.append(value if k in NAMED else f"{k.rsplit('.', 1)[-1]}={value}")
    return ", ".join(cells)


def _plain(text: str | None) -> str:
    if text is None:
        return "(unset)"
    value = json.loads(text)
    return value if isinstance(value, str) else text


def _steps(rec, x_key: str, y_key: str) -> tuple[np.ndarray, np.ndarray]:
    rows = [r for r in rec.metrics if r.get(y_key) is not None and r.get(x_key) is not None]
    return (np.array([r[x_key] for r in rows], dtype=float),
            np.array([r[y_key] for r in rows], dtype=float))


def aggregate(group: RunGroup, x_key: str, y_key: str = "exploitability",
              hold: bool = False) -> Curve | None:
    """The group's mean ``y_key`` (exploitability, or a player's gain ``gain_p0``...) and its
    95% Student-t interval against ``x_key`` (``iteration``, ``wall_time_s`` or
    ``env_steps``) over its distinct runs (:attr:`RunGroup.distinct`); None where a run has
    no measured value on that axis. The curve ends where the first run ends, or, with
    ``hold``, where the last one ends, each run holding its final value after its end (the
    curve's last point is then the mean of the runs' final values)."""
    series = [_steps(rec, x_key, y_key) for rec in group.distinct]
    if any(len(x) == 0 for x, _ in series):
        return None
    start = max(x[0] for x, _ in series)
    end = max(x[-1] for x, _ in series) if hold else min(x[-1] for x, _ in series)
    if x_key == "iteration":
        grid = np.arange(start, end + 1)
    elif end > start:
        grid = _time_grid(series, start, end)
    else:
        grid = np.array([end])
    values = np.stack([y[np.searchsorted(x, grid, side="right") - 1] for x, y in series])
    return interval(grid, values)


def _time_grid(series: list, start: float, end: float) -> np.ndarray:
    """Where a wall-time or env-step curve is evaluated: the runs' own points in
    ``[start, end]`` where they are at most ``MAX_OWN_POINTS`` (the steps are then exact), else
    ``POINTS`` evenly spaced and ``POINTS`` log-spaced ones (so that a log axis keeps the early
    part of the curve)."""
    own = np.unique(np.concatenate([x[(x >= start) & (x <= end)] for x, _ in series]))
    if len(own) <= MAX_OWN_POINTS:
        return own
    spaced = [np.linspace(start, end, POINTS)]
    if start > 0:
        spaced.append(np.geomspace(start, end, POINTS))
    return np.unique(np.concatenate(spaced))


def interval(grid: np.ndarray, values: np.ndarray) -> Curve:
    """The mean over runs of ``values`` (shape ``(runs, len(grid))``) at each point of
    ``grid``, with its 95% Student-t interval (NaN with one run)."""
    n = values.shape[0]
    mean = values.mean(axis=0)
    if n < 2:
        nan = np.full_like(mean, np.nan)
        return Curve(grid, mean, nan, nan, n)
    half = stats.t.ppf(0.975, n - 1) * values.std(axis=0, ddof=1) / math.sqrt(n)
    return Curve(grid, mean, mean - half, mean + half, n)


def final_table(groups: list[RunGroup]) -> list[dict]:
    """Per group: its game and label, the number of seeds and of distinct runs, the
    iterations run (min and max), and the mean and 95% half-width over its distinct runs of
    the final exploitability, wall time and environment steps (the half-width is NaN with one
    distinct run; environment steps are NaN for runs that step no environment, as with exact
    oracles)."""
    rows = []
    for group in groups:
        last = [rec.metrics[-1] for rec in group.distinct]
        everyone = [rec.metrics[-1] for rec in group.records]
        row = {"game": group.game, "group": group.label, "seeds": len(group.records),
               "distinct": len(last),
               "iterations_min": min(r["iteration"] for r in everyone),
               "iterations_max": max(r["iteration"] for r in everyone)}
        for key in ("exploitability", "wall_time_s", "env_steps"):
            values = np.array([r.get(key) for r in last if r.get(key) is not None], float)
            if key == "env_steps" and not values.any():
                values = values[:0]  # exact oracles step no environment: not applicable
            curve = interval(np.zeros(1), values[:, None]) if len(values) else None
            row[key] = float(curve.mean[0]) if curve else math.nan
            row[f"{key}_half_width"] = float(curve.high[0] - curve.mean[0]) if curve \
                else math.nan
        row["exploitability_kind"] = last[0].get("exploitability_kind", "exact")
        rows.append(row)
    return rows
