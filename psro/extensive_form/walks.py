"""A game's walk into sequence form, made once a process where it fails: finding that a game
is too large to walk (phantom tic-tac-toe: about 7 s until the node budget runs out) or lacks
perfect recall costs the same every time, so a failed walk is remembered and its error raised
again at once. Runs, suites and exploitability reports all walk through here."""

from __future__ import annotations

import pyspiel

from psro.errors import GameTooLargeError, NotPerfectRecallError
from psro.extensive_form.sequence_form import SequenceFormGame

_FAILED: dict[tuple[str, int], GameTooLargeError | NotPerfectRecallError] = {}
"""The error of each failed walk, by (the pyspiel game's string, node budget)."""


def walk_game(game: pyspiel.Game, max_nodes: int, name: str | None = None) -> SequenceFormGame:
    """``SequenceFormGame(game, max_nodes, name)``; where walking ``game`` within ``max_nodes``
    failed before in this process, the same :class:`GameTooLargeError` or
    :class:`NotPerfectRecallError` at once, without walking."""
    key = (str(game), max_nodes)
    if key in _FAILED:  # walking it again would fail the same way, seconds later
        raise _FAILED[key]
    try:
        return SequenceFormGame(game, max_nodes=max_nodes, name=name)
    except (GameTooLargeError, NotPerfectRecallError) as err:
        _FAILED[key] = err
        raise


def forget_failed_walks() -> None:
    """Forget every failed walk (a game asked again is walked again)."""
    _FAILED.clear()
