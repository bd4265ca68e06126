"""Suite files: a benchmark suite written as TOML (``psro bench my_suite.toml``), read into a
:class:`~psro.bench.suites.Suite` and checked, with every key its tables do not read refused;
and :func:`get_suite`, which takes a built-in suite's name or a file.

The shape (``docs/guide/benchmark-suite.md`` has an example)::

    name = "poker"                # optional: the file's name without .toml
    seeds = [0, 1, 2]             # distinct integers from 0
    description = "..."           # optional

    [[games]]
    game = "leduc_poker"          # a game string
    label = "Leduc"               # optional: the game string
    tier = "walkable"             # or "large"
    time_budget_s = 60
    # env_steps, thresholds, response_steps, bound_every, exact: see SuiteGame

    [[games.methods]]
    label = "xdo"
    settings = {oracle = "exact", algorithm = "xdo"}   # RunConfig fields
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from psro.bench.suites import SUITES, Suite, check_suite, suite_from_table
from psro.errors import ConfigError
from psro.storage.text_files import read_toml


def read_suite(path: str | Path) -> Suite:
    """A suite from a TOML file: ``name``, ``seeds`` (a list of integers), an optional
    ``description``, and ``[[games]]`` tables with ``game``, ``label``, ``tier``,
    ``time_budget_s``, optional ``env_steps``, ``thresholds``, ``response_steps``,
    ``bound_every``, ``exact``, and ``[[games.methods]]`` tables with ``label`` and ``settings``
    (RunConfig fields). :class:`ConfigError` naming the file and the problem, also for a key
    no table reads and for a key its game's tier does not read."""
    path = Path(path)
    try:
        data = read_toml(path)
    except ValueError as err:
        raise ConfigError(f"suite file {path} cannot be used: {err}") from None
    if not isinstance(data.get("seeds", []), list):
        raise ConfigError(f"suite file {path}: seeds must be a list of integers; got "
                          f"{data['seeds']!r}")
    _check_keys(path, data)
    _check_shape(path, data)
    try:
        suite = replace(suite_from_table(data, path.stem),
                        description=str(data.get("description", "")))
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise ConfigError(f"suite file {path} cannot be used: {type(err).__name__}: {err} "
                          f"(see `psro bench --help` for its shape)") from None
    return check_suite(suite)


SUITE_KEYS = ("name", "seeds", "description", "games")
GAME_KEYS = ("game", "label", "tier", "time_budget_s", "env_steps", "thresholds",
             "response_steps", "bound_every", "exact", "methods")
METHOD_KEYS = ("label", "settings")


def _game_table(game: dict, index: int) -> str:
    """How errors name a ``[[games]]`` table: by its label, its game or its position."""
    return f"[[games]] {game.get('label', game.get('game', index + 1))!r}"


def _check_keys(path: Path, data: dict) -> None:
    """Refuse a key the suite file's tables do not read (a misspelt ``env_step`` would leave
    the runs at another budget than the file says), naming it, its table and what is
    accepted. Tables of the wrong kind are left to
    :func:`~psro.bench.suites.suite_from_table`."""
    settings = " (run settings go in a method's settings table)"
    tables = [("the top level", data, SUITE_KEYS, "")]
    games = data.get("games", [])
    for g, game in enumerate(games if isinstance(games, list) else []):
        if not isinstance(game, dict):
            continue
        where = _game_table(game, g)
        tables.append((where, game, GAME_KEYS, settings))
        methods = game.get("methods", [])
        for m, method in enumerate(methods if isinstance(methods, list) else []):
            if isinstance(method, dict):
                tables.append((f"{where}, method {method.get('label', m + 1)!r}", method,
                               METHOD_KEYS, settings))
        if game.get("tier") == "walkable" and "response_steps" in game:
            raise ConfigError(f"suite file {path}: response_steps in {where} is read on the "
                              f"large tier only (the budget of the best response that "
                              f"measures a lower bound); leave it out")
    for where, table, accepted, hint in tables:
        unknown = sorted(set(table) - set(accepted))
        if unknown:
            raise ConfigError(f"suite file {path}: unknown key(s) {', '.join(unknown)} in "
                              f"{where}; accepted: {', '.join(accepted)}{hint}")


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_integer(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


METHODS = "a list of [[games.methods]] tables"
GAME_SHAPE = {
    "game": ("a string", lambda v: isinstance(v, str)),
    "label": ("a string", lambda v: isinstance(v, str)),
    "tier": ("walkable or large", lambda v: isinstance(v, str)),
    "time_budget_s": ("a number of seconds", _is_number),
    "env_steps": ("an integer", _is_integer),
    "thresholds": ("a list of numbers",
                   lambda v: isinstance(v, list) and all(_is_number(x) for x in v)),
    "response_steps": ("an integer", _is_integer),
    "bound_every": ("an integer", _is_integer),
    "exact": ("true or false", lambda v: isinstance(v, bool)),
    "methods": (METHODS, lambda v: isinstance(v, list) and all(isinstance(m, dict) for m in v)),
}
"""What each key of a ``[[games]]`` table must hold, and the test of it (the values are
checked again when the suite is: :func:`~psro.bench.suites.check_suite`)."""
GAME_REQUIRED = ("game", "tier", "time_budget_s", "methods")
SETTINGS = "a table of run settings (RunConfig fields)"


def _check_shape(path: Path, data: dict) -> None:
    """Refuse a table or value of the wrong kind, or a missing key, naming the table, the key
    and what it must hold (before, ``games = 5`` said "TypeError: 'int' object is not
    iterable" and a game without methods "KeyError: 'methods'")."""
    def refuse(where: str, key: str, kind: str, value=None, missing: bool = False) -> None:
        got = "it is missing" if missing else f"got {value!r}"[:80]
        raise ConfigError(f"suite file {path}: {key} in {where} must be {kind}; {got}")

    for key in ("name", "description"):
        if key in data and not isinstance(data[key], str):
            refuse("the top level", key, "a string", data[key])
    games = data.get("games")
    if not isinstance(games, list) or not all(isinstance(g, dict) for g in games):
        refuse("the top level", "games", "a list of [[games]] tables", games, games is None)
    for g, game in enumerate(games):
        where = _game_table(game, g)
        for key in GAME_REQUIRED:
            if key not in game:
                refuse(where, key, GAME_SHAPE[key][0], missing=True)
        for key, (kind, holds) in GAME_SHAPE.items():
            if key in game and not holds(game[key]):
                refuse(where, key, kind, game[key])
        for m, method in enumerate(game["methods"]):
            inside = f"{where}, method {method.get('label', m + 1)!r}"
            if not isinstance(method.get("label"), str):
                refuse(inside, "label", "a string", method.get("label"), "label" not in method)
            if not isinstance(method.get("settings", {}), dict):
                refuse(inside, "settings", SETTINGS, method["settings"])


def get_suite(name: str) -> Suite:
    """A built-in suite by name, or one read from a TOML file path (:func:`read_suite`);
    :class:`ConfigError` naming what is accepted otherwise."""
    if name in SUITES:
        return SUITES[name]
    if name.endswith(".toml"):
        return read_suite(name)
    raise ConfigError(f"unknown suite {name!r}; accepted: {', '.join(SUITES)}, or a .toml file")
