"""``load(spec)``: one ``Game`` type for OpenSpiel game strings and our normal-form catalogue."""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import sys
from dataclasses import dataclass

import numpy as np
import pyspiel
from open_spiel.python.egt.utils import game_payoffs_array

from games.catalog import CATALOG, CatalogEntry
from games.probe import check_specs, size_problem, spiel_message
from solvers.errors import ToolkitError


class GameError(ToolkitError, ValueError):
    """A game spec that cannot be loaded; the message says why and what is accepted."""


@dataclass(frozen=True)
class Game:
    """A loaded game.

    ``spec`` is the string it was loaded from; ``pyspiel_game`` the OpenSpiel game (catalogue
    games are pyspiel matrix or tensor games); ``payoffs`` the normal-form payoff arrays for
    catalogue games and OpenSpiel's normal-form games (``matrix_bos``, ...), else None.
    ``info_state_shape`` is None when the game provides no information-state tensor
    (``observation_shape`` likewise).
    """

    spec: str
    pyspiel_game: pyspiel.Game
    num_players: int
    num_actions: int
    zero_sum: bool
    info_state_shape: tuple[int, ...] | None
    observation_shape: tuple[int, ...] | None
    payoffs: list[np.ndarray] | None = None

    def new_initial_state(self) -> pyspiel.State:
        """A fresh initial state of the game."""
        return self.pyspiel_game.new_initial_state()


MAX_STRATEGIES = 5_000
"""Most strategies per player of a catalogue game (a 5,000 x 5,000 table is 200 MB)."""

_SPEC = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*$", re.S)


def _parse_params(name: str, text: str | None) -> dict[str, float | int]:
    entry = CATALOG[name]
    params = dict(entry.defaults)
    if not text or not text.strip():
        return params
    seen = set()
    for item in text.split(","):
        if "=" not in item:
            raise GameError(f"bad parameter {item.strip()!r} in {name}(...); use key=value")
        key, value = (part.strip() for part in item.split("=", 1))
        if key in seen:
            raise GameError(f"parameter {key!r} of {name!r} is given twice")
        seen.add(key)
        if key not in entry.defaults:
            accepted = ", ".join(entry.defaults) or "none"
            raise GameError(f"unknown parameter {key!r} for game {name!r}; accepted: {accepted}")
        default = entry.defaults[key]
        try:
            params[key] = int(value) if isinstance(default, int) else float(value)
        except ValueError:
            kind = "an integer" if isinstance(default, int) else "a number"
            raise GameError(f"parameter {key} of {name!r} must be {kind}; got {value!r}") from None
        low = entry.minimum.get(key)
        if not np.isfinite(params[key]) or (low is not None and params[key] < low):
            bound = f" >= {low}" if low is not None else ""
            kind = "an integer" if isinstance(default, int) else "a finite number"
            raise GameError(f"parameter {key} of {name!r} must be {kind}{bound}; "
                            f"got {value}")
    return params


def _from_payoffs(spec: str, arrays: list[np.ndarray]) -> pyspiel.Game:
    if len(arrays) == 2:
        A, B = arrays
        rows = [f"r{i}" for i in range(A.shape[0])]
        cols = [f"c{j}" for j in range(A.shape[1])]
        return pyspiel.create_matrix_game(spec, spec, rows, cols, A.tolist(), B.tolist())
    return pyspiel.create_tensor_game([np.asarray(a, float) for a in arrays])


def _load_failure(spec: str, err: Exception) -> str:
    """Why OpenSpiel refused ``spec``, in one line. A game read from a file (a ``filename``
    parameter) names the file and never quotes it: parsers echo the offending line."""
    try:
        filename = pyspiel.game_parameters_from_string(spec).get("filename")
    except Exception:  # noqa: BLE001 - already parsed once by _check_parameters
        filename = None
    if isinstance(filename, str):
        if not os.path.isfile(filename):
            return f"its file {filename} does not exist"
        return f"its file {filename} is not in the format the game reads"
    return spiel_message(err)


@contextlib.contextmanager
def _quiet_stderr():
    """Silence OpenSpiel's C++ error print-out (the exception carries the same text)."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, ValueError, OSError):  # pytest capture or no real stderr
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), fd)
            yield
    finally:
        os.dup2(saved, fd)
        os.close(saved)


def register(name: str, build, defaults: dict[str, float | int] | None = None,
             summary: str = "", minimum: dict[str, float] | None = None) -> None:
    """Add a normal-form game to the catalogue: ``build(**params)`` returns the per-player
    payoff arrays (``payoffs[p][i_0, ..., i_{N-1}]``), ``defaults`` names every parameter with
    its default (an int default makes the parameter an integer), ``minimum`` the smallest
    accepted value of bounded parameters (a smaller one is refused naming the parameter;
    every value must be finite), and ``load("name(k=v)")``
    then builds it as a pyspiel matrix or tensor game. :class:`GameError` for a taken name
    (catalogue or OpenSpiel)."""
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise GameError(f"a game name must be an identifier; got {name!r}")
    if name in CATALOG or name in pyspiel.registered_names():
        raise GameError(f"game {name!r} is already registered")
    unknown = set(minimum or {}) - set(defaults or {})
    if unknown:
        raise GameError(f"minimum names parameters without a default: {sorted(unknown)}")
    CATALOG[name] = CatalogEntry(build, dict(defaults or {}), summary or name,
                                 minimum=dict(minimum or {}))


INT_RANGE = (-2**31, 2**31 - 1)
"""The integers an OpenSpiel game parameter can hold (a C++ ``int``)."""


def parameter_items(spec: str) -> list[tuple[str, str, str]]:
    """The ``(game, key, value)`` of every parameter in a game string, nested game strings
    included (``turn_based_simultaneous_game(game=goofspiel(num_cards=4))`` gives the outer
    ``game`` and the inner ``num_cards``). :class:`GameError` for a parameter given twice in
    one parameter list (OpenSpiel would keep the last silently)."""
    items: list[tuple[str, str, str]] = []
    open_at = spec.find("(")
    if open_at < 0 or not spec.rstrip().endswith(")"):
        return items
    name, body = spec[:open_at].strip(), spec[open_at + 1:spec.rstrip().rfind(")")]
    parts, depth, start = [], 0, 0
    for i, char in enumerate(body + ","):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    seen: set[str] = set()
    for part in parts:
        if "=" not in part:
            continue
        key, value = (p.strip() for p in part.split("=", 1))
        if key in seen:
            raise GameError(f"parameter {key!r} of {name!r} is given twice in {spec.strip()!r}; "
                            f"give each parameter once")
        seen.add(key)
        items.append((name, key, value))
        items += parameter_items(value)
    return items


def _check_parameters(name: str, spec: str) -> None:
    """Refuse what OpenSpiel would crash on, or keep silently, rather than reject: a parameter
    given twice (the last would win), an integer outside a C++ ``int``, a negative value for
    an integer parameter whose default is not negative (a count such as ``num_cards``)."""
    for game, key, value in parameter_items(spec):
        if re.fullmatch(r"[+-]?\d+", value) and not INT_RANGE[0] <= int(value) <= INT_RANGE[1]:
            raise GameError(f"parameter {key} of {game!r} must be an integer from "
                            f"{INT_RANGE[0]:,} to {INT_RANGE[1]:,} (OpenSpiel's integers); "
                            f"got {value}")
    try:
        with _quiet_stderr():  # OpenSpiel prints the message too; the error below names it
            given = pyspiel.game_parameters_from_string(spec)
    except Exception as err:
        raise GameError(f"cannot parse game {spec!r}: {spiel_message(err)}") from None
    defaults = next((g.parameter_specification for g in pyspiel.registered_games()
                     if g.short_name == name), {})
    for key, value in given.items():
        default = defaults.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value < 0 \
                and isinstance(default, int) and not isinstance(default, bool) \
                and default >= 0:
            raise GameError(f"parameter {key} of {name!r} must not be negative (its default "
                            f"is {default}); got {value}")


def _probe(spec: str) -> None:
    """:func:`games.probe.check_specs` for one spec: its problem as a :class:`GameError`."""
    problem = check_specs([spec])[spec]
    if problem:
        raise GameError(f"game {spec!r} cannot be used: {problem}")


def catalog_names() -> list[str]:
    """Names of the normal-form catalogue games."""
    return list(CATALOG)


def _catalogue_payoffs(name: str, text: str | None) -> list[np.ndarray]:
    """The payoff arrays of catalogue game ``name`` with the parameters ``text``."""
    params = _parse_params(name, text)
    entry = CATALOG[name]
    shown = ", ".join(f"{k}={v}" for k, v in params.items())
    if entry.strategies is not None and entry.strategies(**params) > MAX_STRATEGIES:
        raise GameError(f"game {name!r} with {shown} has {entry.strategies(**params):,} "
                        f"strategies per player; the limit is {MAX_STRATEGIES:,}")
    try:
        payoffs = [np.asarray(a, float) for a in entry.build(**params)]
    except (ArithmeticError, ValueError, IndexError, MemoryError) as err:
        raise GameError(f"game {name!r} cannot be built with {shown}: "
                        f"{type(err).__name__}: {err}") from None
    if not payoffs or any(a.size == 0 or not np.all(np.isfinite(a)) for a in payoffs):
        raise GameError(f"game {name!r} with {shown} has no strategies or non-finite payoffs")
    return payoffs


def _load_openspiel(name: str, spec: str) -> pyspiel.Game:
    """The OpenSpiel game ``spec`` (of registered game ``name``), parameters checked first."""
    known = set(pyspiel.registered_names())
    if name not in known:
        close = difflib.get_close_matches(name, sorted(known | set(CATALOG)), n=5, cutoff=0.5)
        hint = f"; close matches: {', '.join(close)}" if close else ""
        raise GameError(f"unknown game {name!r}{hint}")
    if "(" in spec:  # parameters: OpenSpiel may abort on bad ones, so check them first
        _check_parameters(name, spec)
        _probe(spec.strip())
    try:
        with _quiet_stderr():
            return pyspiel.load_game(spec)
    except Exception as err:  # pyspiel raises pyspiel.SpielError or RuntimeError
        raise GameError(f"cannot load game {spec!r}: {_load_failure(spec, err)}") from None


def load(spec: str) -> Game:
    """Load a game from an OpenSpiel game string or a catalogue name.

    Examples: ``"kuhn_poker"``, ``"goofspiel(num_cards=4)"``, ``"biased_rps"``,
    ``"disc(n=10,seed=3)"``. Raises :class:`GameError` (a ``ValueError``) for an unknown name
    (listing close matches), bad parameters (OpenSpiel's reason in one line), or parameters
    that only fail when play starts (the initial state is created here so they fail now).
    """
    if not isinstance(spec, str) or not spec.strip():
        raise GameError("a game spec must be a non-empty string such as 'kuhn_poker'")
    match = _SPEC.match(spec)
    name = match.group(1) if match else spec.split("(")[0].strip()
    payoffs = None
    if match and name in CATALOG:
        payoffs = _catalogue_payoffs(name, match.group(2))
        game = _from_payoffs(spec.strip(), payoffs)
    else:
        game = _load_openspiel(name, spec)
        if isinstance(game, pyspiel.NormalFormGame):  # OpenSpiel's matrix and tensor games
            payoffs = [np.asarray(a, float) for a in game_payoffs_array(game)]
    try:
        with _quiet_stderr():
            game.new_initial_state()
    except Exception as err:
        raise GameError(f"game {spec!r} loads but cannot start: {spiel_message(err)}") from None
    too_large = size_problem(game)
    if too_large:
        raise GameError(f"game {spec!r} cannot be used: {too_large}")
    kind = game.get_type()
    utility = kind.utility
    zero_sum = utility in (pyspiel.GameType.Utility.ZERO_SUM,
                           pyspiel.GameType.Utility.CONSTANT_SUM)
    info_shape = tuple(game.information_state_tensor_shape()) \
        if kind.provides_information_state_tensor else None
    obs_shape = tuple(game.observation_tensor_shape()) \
        if kind.provides_observation_tensor else None
    return Game(spec=spec.strip(), pyspiel_game=game, num_players=game.num_players(),
                num_actions=game.num_distinct_actions(), zero_sum=zero_sum,
                info_state_shape=info_shape, observation_shape=obs_shape, payoffs=payoffs)
