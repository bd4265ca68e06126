"""What ``psro bench`` checks before it writes anything, so that a suite that cannot run is
refused at its start, not hours in, after the runs before the bad one: the backends of its
runs, and each method's run as a run builds its parts (:func:`psro.build.build_parts`: the
settings no part reads, what the algorithm needs of the game and the oracle). The folder is
checked by :func:`psro.bench.folder.check_suite_folder`."""

from __future__ import annotations

from collections.abc import Sequence

from games import GameError
from psro.backends import check_backend
from psro.errors import ConfigError, GameTooLargeError, UnreadSettingError


def check_runs(runs: Sequence) -> None:
    """Refuse (:class:`ConfigError`, naming the run) the first of ``runs``
    (:class:`psro.bench.plan.PlannedRun`) whose backend or parts cannot be built. Each
    (game, method) is built once, for its first run not started yet (the seeds of a method
    differ in nothing else); runs already started were checked when they started."""
    for where in sorted({(r.config.backend, r.config.workers, r.config.ray_address)
                         for r in runs}, key=repr):
        check_backend(*where)
    from psro.build import build_parts

    checked: set[tuple[str, str]] = set()
    for run in runs:
        key = (run.game.label, run.method.label)
        if key in checked or run.path.exists():
            continue
        checked.add(key)
        try:
            build_parts(run.config)
        except (ConfigError, GameError, GameTooLargeError) as err:
            raise ConfigError(refusal(run, err)) from None


def refusal(run, err: Exception) -> str:
    """Why ``run`` (a :class:`psro.bench.plan.PlannedRun`) cannot start, in one line that
    names it (a walked game in the large tier is named as such: its lower-bound settings are
    what no part reads there)."""
    walked = run.game.tier == "large" and isinstance(err, UnreadSettingError) \
        and err.setting == "lower_bound"
    return f"{run.name}: " + ("the large tier is for games too large to walk, and this one is "
                              "walked; put it in the walkable tier" if walked else str(err))
