"""A game checked the way the toolkit will use it: its sizes against the toolkit's limits, then
a few seeded random episodes that call what the tree walk and the rollouts call (legal actions,
chance outcomes, information-state strings, the observed tensor, returns).

:func:`game_problem` returns what is wrong in one line, or None. :func:`check_specs` runs it in
a child process (:func:`serve`), for many game strings at once, because OpenSpiel aborts the
process on some parameter values instead of raising; a crash there is then a refusal of the
parent, not its death. ``games.load`` checks every game string with parameters this way.
"""

from __future__ import annotations

import json
import os
import random
import re
import select
import subprocess
import sys
import threading

import pyspiel

MAX_DISTINCT_ACTIONS = 1_000_000
"""Most distinct actions a game may have (every policy table and network head has one column
per action; OpenSpiel's largest registered game at its defaults has 93,123)."""
MAX_TENSOR_SIZE = 1_000_000
"""Most numbers in an information-state or observation tensor (a network's input; the largest
of a registered game at its defaults is 7,440)."""
MAX_GAME_LENGTH = 1_000_000
"""Most moves an episode may take (the longest registered game at its defaults: 72,922)."""
PROBE_EPISODES = 3
PROBE_STEPS = 500
"""Random episodes the probe plays, and the moves it plays of each at most."""


def size_problem(game: pyspiel.Game) -> str | None:
    """Why ``game`` is too large for the toolkit (actions, tensor size, episode length), or
    None. OpenSpiel's own sizes can overflow to negative numbers; those are refused too."""
    kind = game.get_type()
    checks = [("distinct actions", "number of actions", game.num_distinct_actions,
               MAX_DISTINCT_ACTIONS)]
    if kind.provides_information_state_tensor:
        checks.append(("numbers in its information-state tensor",
                       "information-state tensor's size", game.information_state_tensor_size,
                       MAX_TENSOR_SIZE))
    elif kind.provides_observation_tensor:
        checks.append(("numbers in its observation tensor", "observation tensor's size",
                       game.observation_tensor_size, MAX_TENSOR_SIZE))
    checks.append(("moves in its longest episode", "longest episode", game.max_game_length,
                   MAX_GAME_LENGTH))
    for what, name, size, limit in checks:
        try:
            value = int(size())
        except pyspiel.SpielError:
            continue  # not implemented by this game; the toolkit does not rely on it
        if value < 0:
            return f"its {name} overflows OpenSpiel's integer arithmetic (the toolkit's " \
                   f"limit is {limit:,})"
        if value > limit:
            return f"it has {value:,} {what}; the toolkit's limit is {limit:,}"
    return None


def _tensor_method(game: pyspiel.Game) -> str | None:
    kind = game.get_type()
    if kind.provides_information_state_tensor:
        return "information_state_tensor"
    if kind.provides_observation_tensor:
        return "observation_tensor"
    return None


class _Problem(Exception):
    """A problem the probe found itself (not an exception of the game's)."""


def _where(state: pyspiel.State) -> str:
    history = state.history()
    shown = " ".join(map(str, history[:20])) + (" ..." if len(history) > 20 else "")
    return f"after actions [{shown}]"


def _decide(game: pyspiel.Game, state: pyspiel.State, rng: random.Random, step: int) -> None:
    """Check one decision node as the toolkit reads it, then play a random legal move."""
    players = range(game.num_players()) if state.is_simultaneous_node() \
        else [state.current_player()]
    tensor = _tensor_method(game)
    kind = game.get_type()
    moves = []
    for player in players:
        if not 0 <= player < game.num_players():
            raise _Problem(f"the player to move is {player}, not a player of this "
                           f"{game.num_players()}-player game, {_where(state)}")
        legal = state.legal_actions(player)
        if not legal:
            raise _Problem(f"player {player} has no legal action at a state that is not "
                           f"terminal, {_where(state)}")
        outside = [a for a in legal if not 0 <= a < game.num_distinct_actions()]
        if outside:
            raise _Problem(f"legal action {outside[0]} of player {player} is not one of the "
                           f"game's {game.num_distinct_actions()} distinct actions, "
                           f"{_where(state)}")
        if kind.provides_information_state_string:
            state.information_state_string(player)
        if tensor is not None and step < 3:  # tensors can be large: a few per episode
            getattr(state, tensor)(player)
        moves.append(rng.choice(legal))
    if state.is_simultaneous_node():
        state.apply_actions(moves)
    else:
        state.apply_action(moves[0])


def play_problem(game: pyspiel.Game, seed: int = 0) -> str | None:
    """What goes wrong in a few seeded random episodes of ``game`` (an OpenSpiel error, a
    non-terminal state without legal actions, a chance node without outcomes), or None."""
    rng = random.Random(seed)
    try:
        for _ in range(PROBE_EPISODES):
            state = game.new_initial_state()
            for step in range(PROBE_STEPS):
                if state.is_terminal():
                    state.returns()
                    break
                if state.is_chance_node():
                    outcomes = [a for a, p in state.chance_outcomes() if p > 0]
                    if not outcomes:
                        return f"a chance node has no outcome of positive probability, " \
                               f"{_where(state)}"
                    state.apply_action(rng.choice(outcomes))
                else:
                    _decide(game, state, rng, step)
    except _Problem as err:
        return str(err)
    except Exception as err:  # noqa: BLE001 - OpenSpiel's errors, and Python games' own
        return f"the game failed during play: {failure(err)}"
    return None


def game_problem(spec: str) -> str | None:
    """What keeps the game ``spec`` from being used (sizes, then play), or None. A spec that
    OpenSpiel does not load gives None: the caller loads it and reports OpenSpiel's reason."""
    try:
        game = pyspiel.load_game(spec)
    except Exception:  # noqa: BLE001 - the caller loads it again and names OpenSpiel's reason
        return None
    return size_problem(game) or play_problem(game)


def spiel_message(err: BaseException) -> str:
    """OpenSpiel's message in one line: its lines joined by "; ", source paths cut to the file
    name (``/project/open_spiel/spiel.cc:934 player < num_players_`` becomes
    ``spiel.cc:934 player < num_players_``)."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    lines = [re.sub(r"^/\S*/([^/\s]+:\d+)", r"\1", line) for line in lines]
    text = "; ".join(lines) or type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def failure(err: BaseException) -> str:
    """A game's exception in one line: OpenSpiel's message, or (a game written in Python)
    the exception's type and message."""
    if isinstance(err, pyspiel.SpielError):
        return spiel_message(err)
    return f"{type(err).__name__}: {spiel_message(err)}"


_PROBE = ("import sys; sys.path.insert(0, sys.argv[1]); from games.probe import serve; "
          "serve()")
PROBE_TIMEOUT_S = 60
"""Longest a probe child may be silent on one game string before the game is refused (work
that announces itself with :func:`keep_alive` does not count)."""
_probed: dict[str, str | None] = {}
"""Each probed spec's problem (None: fine), kept for the process."""
_serving = False
"""Whether this process is a probe child (:func:`serve`)."""


def keep_alive() -> None:
    """Tell the parent, from a probe child, that the spec it checks is busy with long work
    that ends (training a debate game's judge on a fresh cache: half a minute, more on a busy
    machine), so that the parent waits on: ``PROBE_TIMEOUT_S`` counts the child's silence,
    and each line restarts it. Outside a probe child, nothing."""
    if _serving:
        print('{"alive": true}', flush=True)


def check_specs(specs: list[str]) -> dict[str, str | None]:
    """Check game strings the way :func:`load` does before loading them, many in one child
    process (:mod:`games.probe`: sizes against the toolkit's limits, then a few seeded random
    episodes): per spec, why it cannot be used in one line, or None. A spec that crashes the
    child (OpenSpiel aborts on some parameter values instead of raising) or runs past
    ``PROBE_TIMEOUT_S`` without a sign of work (:func:`keep_alive`) is named as such and the
    rest are checked in a new child. A spec that
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


def serve() -> None:
    """The child process's loop: for each JSON string line on stdin (a game spec), one line
    ``{"spec": ..., "problem": ...}`` on stdout, flushed, so that a crash on one spec leaves
    the answers before it."""
    import open_spiel.python.games  # noqa: F401 - the games written in Python, as the parent has

    global _serving
    _serving = True
    for line in sys.stdin:
        if line.strip():
            spec = json.loads(line)
            print(json.dumps({"spec": spec, "problem": game_problem(spec)}), flush=True)


if __name__ == "__main__":
    serve()
