"""XDO's ``"responses"`` restricted game: at each information set, the actions some best
response of a player's population takes with positive probability (the lowest legal action
where none does yet).

``xdo`` asks for the restricted game of a population several times an iteration (to solve
it, to count its actions, to test whether the newest responses added any), and each
population grows by one best response an iteration, so :class:`ResponseActions` keeps the
last few answers and ORs in only the members past the longest one it can extend: a call costs
one member's mask instead of the whole population's (a run of ``n`` iterations, ``n`` masks
instead of about ``n**2``). Members are recognised by identity, as populations hold them; a
member's probabilities are never changed once it has joined.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame

KEPT = 4
"""The answers :class:`ResponseActions` keeps per player (the calls of about two
iterations)."""


def with_lowest_legal(allowed: np.ndarray, legal: list) -> np.ndarray:
    """``allowed`` (boolean (num_infosets, num_actions), changed in place) with the lowest
    ``legal`` action at each information set where it allows none: a restricted game acts."""
    for i in np.flatnonzero(~allowed.any(axis=1)):
        allowed[i, legal[i][0]] = True
    return allowed


class ResponseActions:
    """The restricted game of best-response members (module docstring). Members whose
    ``metadata["oracle"]`` is in ``not_responses`` (the uniform start, restricted equilibria)
    add no action."""

    def __init__(self, tree: SequenceFormGame, not_responses: Sequence[str]):
        self.tree = tree
        self.not_responses = tuple(not_responses)
        self._answers: list[list[tuple[tuple, np.ndarray]]] = [[] for _ in tree.players]
        """Per player, the last calls' members and their masks (before the lowest legal
        actions are added)."""

    def __call__(self, player: int, members: Sequence) -> np.ndarray:
        """Boolean (num_infosets, num_actions): ``player``'s restricted game of ``members``
        (a new array each call)."""
        members = tuple(members)
        mask, done = None, 0
        for seen, answer in self._answers[player]:
            if done < len(seen) <= len(members) and all(
                    a is b for a, b in zip(seen, members[:len(seen)], strict=True)):
                mask, done = answer, len(seen)
        info = self.tree.players[player]
        mask = np.zeros((info.num_infosets, self.tree.num_actions), dtype=bool) \
            if mask is None else mask.copy()
        for member in members[done:]:
            if member.metadata.get("oracle") not in self.not_responses:
                mask |= member.probs > 0
        self._answers[player] = [*self._answers[player][1 - KEPT:], (members, mask)]
        return with_lowest_legal(mask.copy(), info.legal)


__all__ = ["KEPT", "ResponseActions", "with_lowest_legal"]
