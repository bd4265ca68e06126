"""``load(spec)``: one ``Game`` type for OpenSpiel game strings and our normal-form catalogue."""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import select
import subprocess
import sys
import threading
from dataclasses import dataclass

import numpy as np
import pyspiel

from games.catalog import CATALOG, CatalogEntry
from games.probe import size_problem, spiel_message
from solvers.errors import ToolkitError


class GameError(ToolkitError, ValueError):
    """A game spec that cannot be loaded; the message says why and what is accepted."""


@dataclass(frozen=True)
class Game:
    """A loaded game.

    ``spec`` is the string it was loaded from; ``pyspiel_game`` the OpenSpiel game (catalogue
    games are pyspiel matrix or tensor games); ``payoffs`` the normal-form payoff arrays for
    catalogue games, else None. ``info_state_shape`` is None when the game provides no
    information-state tensor (``observation_shape`` likewise).
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


def _check_parameters(name: str, spec: str) -> None:
    """Refuse what OpenSpiel would crash on rather than reject: a negative value for an
    integer parameter whose default is not negative (a count such as ``num_cards``)."""
    try:
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


_PROBE = ("import sys; sys.path.insert(0, sys.argv[1]); from games.probe import serve; "
          "serve()")
PROBE_TIMEOUT_S = 60
"""Longest a probe child may spend on one game string before the game is refused."""
_probed: dict[str, str | None] = {}
"""Each probed spec's problem (None: fine), kept for the process."""


def check_specs(specs: list[str]) -> dict[str, str | None]:
    """Check game strings the way :func:`load` does before loading them, many in one child
    process (:mod:`games.probe`: sizes against the toolkit's limits, then a few seeded random
    episodes): per spec, why it cannot be used in one line, or None. A spec that crashes the
    child (OpenSpiel aborts on some parameter values instead of raising) or runs past
    ``PROBE_TIMEOUT_S`` is named as such and the rest are checked in a new child. A spec that
    OpenSpiel does not load at all gives None here (:func:`load` reports OpenSpiel's reason).
    Results are kept for the process."""
    pending = [spec for spec in dict.fromkeys(specs) if spec not in _probed]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    while pending:
        pending = pending[_probe_batch(root, pending):]
    return {spec: _probed[spec] for spec in specs}


def _probe_batch(root: str, specs: list[str]) -> int:
    """Probe ``specs`` in order in one child; returns how many got a result (the first
    without one crashed the child or ran past ``PROBE_TIMEOUT_S``, and is given its problem
    here)."""
    child = subprocess.Popen([sys.executable, "-c", _PROBE, root], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    feed = "".join(json.dumps(spec) + "\n" for spec in specs).encode()
    writer = threading.Thread(target=_feed, args=(child.stdin, feed), daemon=True)
    writer.start()
    answered, pending, timed_out = 0, b"", False
    fd = child.stdout.fileno()
    try:
        while answered < len(specs):
            ready, _, _ = select.select([fd], [], [], PROBE_TIMEOUT_S)
            if not ready:
                timed_out = True
                break
            chunk = os.read(fd, 65536)
            if not chunk:
                break  # the child ended: it crashed on specs[answered]
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    reply = json.loads(line)
                    _probed[reply["spec"]] = reply["problem"]
                except (ValueError, KeyError, TypeError):
                    continue
                answered += 1
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
    if answered >= len(specs):
        return answered
    if timed_out:
        _probed[specs[answered]] = f"it did not load and play within {PROBE_TIMEOUT_S} s"
    else:
        code = child.returncode
        how = f"signal {-code}" if code < 0 else f"exit status {code}"
        _probed[specs[answered]] = f"it crashes OpenSpiel ({how}); check its parameters' ranges"
    return answered + 1


def _feed(stdin, data: bytes) -> None:
    try:
        stdin.write(data)
        stdin.close()
    except OSError:  # the child ended early (a crash): the reader reports it
        pass


def _probe(spec: str) -> None:
    """:func:`check_specs` for one spec: its problem as a :class:`GameError`."""
    problem = check_specs([spec])[spec]
    if problem:
        raise GameError(f"game {spec!r} cannot be used: {problem}")


def catalog_names() -> list[str]:
    """Names of the normal-form catalogue games."""
    return list(CATALOG)


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
        params = _parse_params(name, match.group(2))
        entry = CATALOG[name]
        if entry.strategies is not None and entry.strategies(**params) > MAX_STRATEGIES:
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            raise GameError(f"game {name!r} with {shown} has {entry.strategies(**params):,} "
                            f"strategies per player; the limit is {MAX_STRATEGIES:,}")
        try:
            payoffs = [np.asarray(a, float) for a in CATALOG[name].build(**params)]
        except (ArithmeticError, ValueError, IndexError, MemoryError) as err:
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            raise GameError(f"game {name!r} cannot be built with {shown}: "
                            f"{type(err).__name__}: {err}") from None
        if not payoffs or any(a.size == 0 or not np.all(np.isfinite(a)) for a in payoffs):
            shown = ", ".join(f"{k}={v}" for k, v in params.items())
            raise GameError(f"game {name!r} with {shown} has no strategies or non-finite "
                            f"payoffs")
        game = _from_payoffs(spec.strip(), payoffs)
    else:
        known = set(pyspiel.registered_names())
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known | set(CATALOG)), n=5,
                                              cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise GameError(f"unknown game {name!r}{hint}")
        if "(" in spec:  # parameters: OpenSpiel may abort on bad ones, so check them first
            _check_parameters(name, spec)
            _probe(spec.strip())
        try:
            with _quiet_stderr():
                game = pyspiel.load_game(spec)
        except Exception as err:  # pyspiel raises pyspiel.SpielError or RuntimeError
            raise GameError(f"cannot load game {spec!r}: {_load_failure(spec, err)}") from None
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
