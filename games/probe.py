"""A game checked the way the toolkit will use it: its sizes against the toolkit's limits, then
a few seeded random episodes that call what the tree walk and the rollouts call (legal actions,
chance outcomes, information-state strings, the observed tensor, returns).

:func:`game_problem` returns what is wrong in one line, or None. ``games.loading`` runs it in a
child process (``python -m games.probe SPEC``) for game strings with parameters, because
OpenSpiel aborts the process on some parameter values instead of raising; a crash there is then
an error of the parent, not its death.
"""

from __future__ import annotations

import json
import random
import re
import sys

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


def serve() -> None:
    """The child process's loop: for each JSON string line on stdin (a game spec), one line
    ``{"spec": ..., "problem": ...}`` on stdout, flushed, so that a crash on one spec leaves
    the answers before it."""
    import open_spiel.python.games  # noqa: F401 - the games written in Python, as the parent has

    for line in sys.stdin:
        if line.strip():
            spec = json.loads(line)
            print(json.dumps({"spec": spec, "problem": game_problem(spec)}), flush=True)


if __name__ == "__main__":
    serve()
