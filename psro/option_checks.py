"""Checks of a run configuration's values and option tables (``monte_carlo``,
``lower_bound``): each refuses a bad value with a :class:`~psro.errors.ConfigError` that
names the option and what it accepts."""

from __future__ import annotations

import math

from psro.errors import ConfigError
from psro.rl.config import response_config

MONTE_CARLO_OPTIONS = ("tolerance", "min_episodes", "max_episodes", "batch", "refine",
                       "iteration_episodes")
TABLE_OPTIONS = ("refine", "iteration_episodes")
"""The ``monte_carlo`` options that only fill payoff tables (the others also set how the lower
bound's returns are estimated)."""
REFINE_MODES = ("all", "support")
"""Values of ``monte_carlo.refine``: which sampled entries get the full tolerance when they
are first filled (all of them), or only those the meta-strategy depends on."""
LOWER_BOUND_OPTIONS = ("every", "every_s", "env_steps", "ppo", "final")


def check_count(name: str, value, minimum: int = 1, maximum: int | None = None) -> None:
    """``value`` must be an integer (not a bool) from ``minimum`` to ``maximum``."""
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum \
            or (maximum is not None and value > maximum):
        kind = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        if maximum is not None:
            kind = f"an integer from {minimum} to {maximum:,}"
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) \
            and abs(value) < 10**30 else repr(value)[:40]
        raise ConfigError(f"{name} must be {kind}; got {shown}")


def check_lower_bound(table: dict) -> None:
    """The ``lower_bound`` table: known keys; ``every`` and ``env_steps`` positive integers,
    ``every_s`` a positive number, ``final`` a boolean, ``ppo`` PPO options
    (:func:`check_response_options`); ``env_steps`` or ``ppo`` that no measurement reads
    (``final = false`` without ``every`` or ``every_s``) are refused."""
    unknown = sorted(set(table) - set(LOWER_BOUND_OPTIONS))
    if unknown:
        raise ConfigError(f"unknown lower_bound option(s) {', '.join(unknown)}; accepted: "
                          f"{', '.join(LOWER_BOUND_OPTIONS)}")
    for key in ("every", "env_steps"):
        if key in table:
            check_count(f"lower_bound.{key}", table[key])
    check_positive("lower_bound.every_s", table.get("every_s"))
    final = table.get("final", True)
    if not isinstance(final, bool):
        raise ConfigError(f"lower_bound.final must be true or false; got {final!r}")
    unread = sorted({"env_steps", "ppo"} & set(table))
    if not final and unread and not {"every", "every_s"} & set(table):
        raise ConfigError(f"lower_bound.{' and '.join(unread)} would be read by no "
                          f"measurement: lower_bound.final is false and neither every nor "
                          f"every_s is set")
    check_response_options(table.get("ppo"))


def check_response_options(options) -> None:
    """``lower_bound.ppo``: None or a table of PPO options without ``env_steps`` (the budget
    is ``lower_bound.env_steps``)."""
    if options is None:
        return
    if not isinstance(options, dict):
        raise ConfigError(f"lower_bound.ppo must be a table of PPO options; got {options!r}")
    if "env_steps" in options:
        raise ConfigError("lower_bound.ppo.env_steps: give the responses' budget as "
                          "lower_bound.env_steps")
    try:
        response_config(options)
    except ConfigError as err:
        raise ConfigError(f"lower_bound.ppo: {err}") from None


def check_monte_carlo(options: dict) -> None:
    """The ``monte_carlo`` table: known keys; ``refine`` one of ``REFINE_MODES``; episode
    counts positive integers, ``min_episodes`` at most ``max_episodes`` where both are given
    (where only ``max_episodes`` is, below the default minimum, it caps the minimum too);
    ``tolerance`` a positive number."""
    unknown = sorted(set(options) - set(MONTE_CARLO_OPTIONS))
    if unknown:
        raise ConfigError(f"unknown monte_carlo option(s) {', '.join(unknown)}; accepted: "
                          f"{', '.join(MONTE_CARLO_OPTIONS)}")
    for key, value in options.items():
        if key == "refine":
            if value not in REFINE_MODES:
                raise ConfigError(f"monte_carlo.refine must be one of "
                                  f"{', '.join(REFINE_MODES)}; got {value!r}")
        elif key == "tolerance":
            check_positive(f"monte_carlo.{key}", value)
        else:
            check_count(f"monte_carlo.{key}", value)
    low, high = options.get("min_episodes"), options.get("max_episodes")
    if low is not None and high is not None and low > high:
        raise ConfigError(f"monte_carlo.min_episodes ({low:,}) is above max_episodes "
                          f"({high:,}): sampling stops at max_episodes, so min_episodes would "
                          f"be ignored; give min_episodes <= max_episodes")


def check_positive(name: str, value, maximum: float | None = None) -> None:
    """``value`` must be None or a finite number above 0 (and at most ``maximum``)."""
    if value is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool) \
            or not math.isfinite(value) or value <= 0:
        kind = "a positive number" if maximum is None else f"a number in (0, {maximum:g}]"
        raise ConfigError(f"{name} must be {kind}; got {value!r}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"{name} must be a number in (0, {maximum:g}]; got {value!r}")


def checked_callbacks(callbacks) -> list:
    """A run's ``callbacks`` as a list; :class:`ConfigError` (before any work) for anything
    but a list or tuple of functions ``f(psro, row)``."""
    if not isinstance(callbacks, (list, tuple)) or not all(map(callable, callbacks)):
        raise ConfigError(f"callbacks must be a list or tuple of functions f(psro, row); got "
                          f"{callbacks!r:.100}")
    return list(callbacks)
