"""The CFR family on the whole walked game, vectorised on its sequence form: CFR+, linear CFR,
discounted CFR and predictive CFR+ (:data:`VARIANTS`), the tabular solvers a paper compares
equilibrium finders with.

Every variant updates the players in turn (alternating updates: player p's update sees the
policies the earlier players took this iteration), by one backward pass over p's information
sets per iteration (:func:`psro.extensive_form.restricted_cfr.counterfactual_values`), and
returns each player's *average* policy, the iterates' realization plans weighted by ``t **
gamma`` at iteration ``t``. At iteration ``t`` player p's accumulated regrets ``R`` get the
instantaneous counterfactual regrets ``r_t``, then:

- ``cfr+`` (Tammelin 2014): ``R = max(R, 0)``; linear averaging (``gamma = 1``);
- ``lcfr``, linear CFR, and ``dcfr``, discounted CFR (Brown and Sandholm 2019): ``R >= 0``
  multiplied by ``t**alpha / (t**alpha + 1)``, ``R < 0`` by ``t**beta / (t**beta + 1)``;
  ``lcfr`` is ``alpha = beta = gamma = 1``, ``dcfr`` the paper's ``alpha = 1.5, beta = 0,
  gamma = 2``. Both play regret matching (OpenSpiel's ``discounted_cfr``, whose average
  policies they equal to rounding);
- ``pcfr+``, predictive CFR+ (Farina, Kroer and Sandholm 2021): ``R = max(R, 0)``, quadratic
  averaging (``gamma = 2``), and each iterate is predictive regret matching+ on a prediction
  of the next counterfactual values: the prediction of the leaves' values is the last observed
  (this iteration's), and the information sets' predicted counterfactual values are computed
  bottom-up from it with the *new* policies of the information sets below (predictive CFR:
  deepest first, each information set's new policy is ``[R + m]^+`` normalised, ``m`` its
  predicted values minus their expectation under its current policy, and its predicted value
  under the new policy feeds its parent's).

Policies are arrays (num_infosets, num_actions) of one player, as the tree numbers them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psro.extensive_form.restricted_cfr import (
    PreparedPlayer,
    behaviour,
    counterfactual_values,
    leaf_weights,
    plan_of,
    prepare_player,
    regret_matching,
)
from psro.extensive_form.sequence_form import SequenceFormGame


@dataclass(frozen=True)
class CFRVariant:
    """A member of the CFR family: regrets floored at 0 (``plus``), discounted by
    ``alpha``/``beta`` (None: not discounted), averaged with weights ``t ** gamma``, and
    iterates by predictive regret matching+ (``predictive``)."""

    name: str
    plus: bool
    alpha: float | None
    beta: float | None
    gamma: float
    predictive: bool = False


VARIANTS = {
    "pcfr+": CFRVariant("pcfr+", plus=True, alpha=None, beta=None, gamma=2.0, predictive=True),
    "dcfr": CFRVariant("dcfr", plus=False, alpha=1.5, beta=0.0, gamma=2.0),
    "lcfr": CFRVariant("lcfr", plus=False, alpha=1.0, beta=1.0, gamma=1.0),
    "cfr+": CFRVariant("cfr+", plus=True, alpha=None, beta=None, gamma=1.0),
}
"""The variants by name (see the module docstring)."""


class TabularCFR:
    """A CFR-family solver of the walked game ``tree`` (any number of players; the average
    profile converges to a Nash equilibrium in two-player zero-sum games). ``variant``: a name
    of :data:`VARIANTS` or a :class:`CFRVariant`."""

    def __init__(self, tree: SequenceFormGame, variant: str | CFRVariant = "dcfr"):
        if isinstance(variant, str):
            if variant not in VARIANTS:
                raise ValueError(f"unknown CFR variant {variant!r}; accepted: "
                                 f"{', '.join(VARIANTS)}")
            variant = VARIANTS[variant]
        self.tree, self.variant = tree, variant
        n = tree.num_players
        self.legal = [tree.uniform_policy(p) > 0 for p in range(n)]
        self.prepared: list[PreparedPlayer] = [prepare_player(tree, p, self.legal[p])
                                               for p in range(n)]
        self.t = 0
        """Iterations run."""
        self.regrets = [np.zeros(a.shape) for a in self.legal]
        self.plan_sums = [np.zeros(tree.players[p].num_sequences) for p in range(n)]
        self.probs = [regret_matching(r, a) for r, a in zip(self.regrets, self.legal,
                                                             strict=True)]
        """The current iterate's policies."""
        self.plans = [plan_of(self.prepared[p], self.probs[p]) for p in range(n)]

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` iterations (alternating updates)."""
        for _ in range(iterations):
            self.t += 1
            for p in range(self.tree.num_players):
                self._update(p)

    def _update(self, p: int) -> None:
        tree, prepared, variant, t = self.tree, self.prepared[p], self.variant, self.t
        weight = leaf_weights(tree, p, self.plans, prepared.returns)
        cf, node, _ = counterfactual_values(tree, p, prepared, weight, self.probs[p])
        regrets = self.regrets[p] + np.where(self.legal[p], cf - node[:, None], 0.0)
        if variant.plus:
            regrets = np.maximum(regrets, 0.0)
        if variant.alpha is not None:
            up, down = t ** variant.alpha, t ** variant.beta
            regrets = regrets * np.where(regrets >= 0, up / (up + 1), down / (down + 1))
        self.regrets[p] = regrets
        self.plan_sums[p] += float(t) ** variant.gamma * self.plans[p]
        if variant.predictive:
            self.probs[p] = self._predicted(p, weight)
        else:
            self.probs[p] = regret_matching(regrets, self.legal[p], prepared.uniform)
        self.plans[p] = plan_of(prepared, self.probs[p])

    def _predicted(self, p: int, weight: np.ndarray) -> np.ndarray:
        """Predictive regret matching+ from the leaves' values ``weight`` as the prediction,
        bottom-up (see the module docstring)."""
        tree, prepared, regrets = self.tree, self.prepared[p], self.regrets[p]
        info = tree.players[p]
        value = np.bincount(tree.leaf_seqs[p], weights=weight, minlength=info.num_sequences)
        probs = self.probs[p].copy()
        for infosets, seqs, ok, parents in prepared.levels:
            predicted = np.where(ok, value[seqs], 0.0)
            expected = np.sum(predicted * probs[infosets], axis=1, keepdims=True)
            gain = np.where(ok, np.maximum(regrets[infosets] + predicted - expected, 0.0), 0.0)
            total = gain.sum(axis=1, keepdims=True)
            probs[infosets] = np.where(total > 0, gain / np.where(total > 0, total, 1.0),
                                       prepared.uniform[infosets])
            np.add.at(value, parents, np.sum(predicted * probs[infosets], axis=1))
        return probs

    def average(self) -> list[np.ndarray]:
        """Each player's average policy (uniform where it does not reach)."""
        return [behaviour(self.tree, p, self.plan_sums[p], self.legal[p])
                for p in range(self.tree.num_players)]

    def current(self) -> list[np.ndarray]:
        """Each player's current iterate (copies)."""
        return [probs.copy() for probs in self.probs]


__all__ = ["VARIANTS", "CFRVariant", "TabularCFR"]
