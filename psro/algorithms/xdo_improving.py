"""XDO's ``"improving"`` expansion: the restricted game grows by the actions that improve on
its equilibrium, not by every action of the best responses.

An exact best response acts at every information set, and ``xdo``'s usual expansion adds each
of its actions, also where the action does no better than the restricted equilibrium; on liar's
dice its restricted game ends with 80% of the game's actions. This expansion adds, after each
restricted equilibrium, the actions of positive counterfactual regret against it
(:func:`psro.extensive_form.improving.improving_actions`), and the new best responses' actions
only where none of those is new. With exact responses ``xdo`` stops when the restricted
equilibrium's exact exploitability is 0 (:meth:`ImprovingExpansion.solved`) or, as it does
growing by responses, when the best responses add nothing: either way at an equilibrium of
the full game.

The restricted game of iteration k is a function of the populations (so a resumed run grows
the same game): the lowest legal actions and the actions of the iteration-1 best responses (to
the uniform policy); then for j = 1 .. k-1, the improving actions against the equilibrium of
iteration j (both players' ``xdo_restricted_nash`` members), or, where those add nothing, the
actions of the best responses of iteration j+1.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from psro.extensive_form.improving import REGRET_TOLERANCE, improving_actions, prepared_players
from psro.extensive_form.sequence_form import SequenceFormGame


class ImprovingExpansion:
    """The restricted game of each iteration under the ``"improving"`` expansion (module
    docstring). ``responses(player, members)`` is ``xdo``'s restricted game of those
    best-response members (with the lowest legal action where none acts)."""

    def __init__(self, tree: SequenceFormGame, responses: Callable, equilibrium: str,
                 not_responses: tuple[str, ...], scale: float):
        self.tree = tree
        self.responses = responses
        self.equilibrium = equilibrium
        self.not_responses = not_responses
        self.tolerance = REGRET_TOLERANCE * scale
        self._prepared = None
        self._improving: dict[tuple[str, ...], list[np.ndarray]] = {}
        self._recent: list[tuple[list[tuple], list[np.ndarray]]] = []
        """The last few calls' populations (their members) and restricted games: ``xdo`` asks
        for the same ones several times an iteration (its stop test for the previous
        iteration's too)."""

    def allowed(self, populations: list[list]) -> list[np.ndarray]:
        """Each player's boolean (num_infosets, num_actions) restricted game for the newest
        best responses in ``populations`` (their iteration k; see the module docstring)."""
        members = [tuple(pop) for pop in populations]
        for seen, allowed in self._recent:
            if len(seen) == len(members) and all(
                    len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
                    for a, b in zip(seen, members, strict=True)):
                return [a.copy() for a in allowed]
        allowed = self._grown(populations)
        self._recent = [*self._recent[-2:], (members, [a.copy() for a in allowed])]
        return allowed

    def _grown(self, populations: list[list]) -> list[np.ndarray]:
        n = len(populations)
        responses = [self._by_iteration(pop, lambda m: m.metadata.get("oracle")
                                        not in self.not_responses) for pop in populations]
        solved = [self._by_iteration(pop, lambda m: m.metadata.get("oracle") == self.equilibrium)
                  for pop in populations]
        allowed = [self.responses(p, responses[p].get(1, [])) for p in range(n)]
        last = max((max(r, default=0) for r in responses), default=0)
        for j in range(1, last):
            if not all(j in s for s in solved):
                continue
            improving = self._improving_against([s[j][-1] for s in solved], allowed)
            added = [a & ~b for a, b in zip(improving, allowed, strict=True)]
            if not any(a.any() for a in added):
                added = [self.responses(p, responses[p].get(j + 1, [])) & ~allowed[p]
                         for p in range(n)]
            allowed = [a | b for a, b in zip(allowed, added, strict=True)]
        return allowed

    def solved(self, metrics: list[dict]) -> bool:
        """Whether the newest restricted equilibrium's exact exploitability (the last metrics
        row's) is at most the regret tolerance: then it is an equilibrium of the full game,
        and improving actions left at information sets its own players never reach would only
        lead to another one."""
        value = metrics[-1].get("exploitability") if metrics else None
        return value is not None and value <= self.tolerance

    @staticmethod
    def _by_iteration(members: list, keep: Callable) -> dict[int, list]:
        out: dict[int, list] = {}
        for member in members:
            if keep(member):
                out.setdefault(int(member.metadata.get("iteration", 0)), []).append(member)
        return out

    def _improving_against(self, equilibrium: list, allowed: list[np.ndarray]
                           ) -> list[np.ndarray]:
        """The improving actions against the restricted ``equilibrium`` (members) of the
        restricted game ``allowed``, its play where its own players do not reach replaced by
        restricted best responses
        (:func:`~psro.extensive_form.improving.best_off_path`)."""
        key = tuple(m.name for m in equilibrium)
        if key not in self._improving:
            if self._prepared is None:
                self._prepared = prepared_players(self.tree)
            plans = [m.realization_plan(self.tree) for m in equilibrium]
            self._improving[key] = improving_actions(
                self.tree, self._prepared, [m.probs for m in equilibrium], self.tolerance,
                plans, allowed)
        return self._improving[key]


__all__ = ["REGRET_TOLERANCE", "ImprovingExpansion"]
