"""The CFR family on the whole walked game, vectorised on its sequence form: CFR+, linear CFR,
discounted CFR, discounted CFR+ and predictive CFR+
(:data:`~psro.extensive_form.cfr_variants.VARIANTS`, whose module states each one's rule), the
tabular solvers a paper compares equilibrium finders with.

Every variant updates the players in turn (alternating updates: player p's update sees the
policies the earlier players took this iteration), by one backward pass over p's information
sets per iteration (:func:`psro.extensive_form.sequence_passes.values`), and
returns each player's *average* policy, the iterates' realization plans weighted by ``t **
gamma`` at iteration ``t``. It is :class:`~psro.extensive_form.restricted_cfr.RestrictedCFR`
on the restricted game that allows every legal action.

Policies are arrays (num_infosets, num_actions) of one player, as the tree numbers them.
"""

from __future__ import annotations

import numpy as np

from psro.extensive_form.cfr_variants import VARIANTS, CFRVariant
from psro.extensive_form.restricted_cfr import RestrictedCFR
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_passes import policy_array


class TabularCFR(RestrictedCFR):
    """A CFR-family solver of the walked game ``tree`` (any number of players; the average
    profile converges to a Nash equilibrium in two-player zero-sum games). ``variant``: a name
    of :data:`VARIANTS` or a :class:`CFRVariant` (``ValueError`` naming the accepted names
    otherwise)."""

    def __init__(self, tree: SequenceFormGame, variant: str | CFRVariant = "dcfr"):
        super().__init__(tree, warm=False, variant=variant)
        self.legal = [tree.uniform_policy(p) > 0 for p in range(tree.num_players)]
        """Each player's legal actions, (num_infosets, num_actions) booleans."""
        self._start(self.legal)

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` iterations (alternating updates)."""
        self.replay(self.legal, iterations)

    def average(self, allowed: list[np.ndarray] | None = None) -> list[np.ndarray]:
        """Each player's average policy (uniform where it does not reach)."""
        return super().average(self.legal if allowed is None else allowed)

    def current(self) -> list[np.ndarray]:
        """Each player's current iterate (copies)."""
        return [policy_array(self.tree, p, probs)
                for p, probs in enumerate(self.current_by_sequence())]


__all__ = ["VARIANTS", "CFRVariant", "TabularCFR"]
