"""The members of the CFR family the toolkit runs (:data:`VARIANTS`): how each turns one
iteration's instantaneous counterfactual regrets into its accumulated regrets, how it weights
its iterates in the average, and how it picks its next iterate.

At iteration ``t`` (counted from 1) player p's accumulated regrets ``R`` get the
instantaneous counterfactual regrets ``r_t``, then:

- ``cfr+`` (Tammelin 2014): ``R = max(R, 0)``; linear averaging (``gamma = 1``);
- ``lcfr``, linear CFR, and ``dcfr``, discounted CFR (Brown and Sandholm 2019): ``R >= 0``
  multiplied by ``t**alpha / (t**alpha + 1)``, ``R < 0`` by ``t**beta / (t**beta + 1)``;
  ``lcfr`` is ``alpha = beta = gamma = 1``, ``dcfr`` the paper's ``alpha = 1.5, beta = 0,
  gamma = 2``. Both play regret matching (OpenSpiel's ``discounted_cfr``, whose average
  policies they equal to rounding);
- ``dcfr+``, discounted CFR+ (Xu et al. 2024): ``R = max(R, 0)`` then ``R`` multiplied by
  ``t**1.5 / (t**1.5 + 1)``, averaging with ``gamma = 4`` (the authors' setting). Discounting
  after the floor at iteration ``t`` gives the regrets the authors' rule gives (theirs discount
  before adding ``r_{t+1}``) times a positive factor, so the same iterates;
- ``pcfr+``, predictive CFR+ (Farina, Kroer and Sandholm 2021): ``R = max(R, 0)``, quadratic
  averaging (``gamma = 2``), and each iterate is predictive regret matching+ on a prediction
  of the next counterfactual values: the prediction of the leaves' values is the last observed
  (this iteration's), and the information sets' predicted counterfactual values are computed
  bottom-up from it with the *new* policies of the information sets below (predictive CFR:
  deepest first, each information set's new policy is ``[R + m]^+`` normalised, ``m`` its
  predicted values minus their expectation under its current policy, and its predicted value
  under the new policy feeds its parent's).

The average policy weights iteration ``t``'s realization plan by ``t ** gamma``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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

    def accumulate(self, regrets: np.ndarray, instantaneous: np.ndarray, t: int) -> np.ndarray:
        """The accumulated regrets after iteration ``t`` (arrays (num_infosets,
        num_actions); ``instantaneous`` is 0 where an action is not allowed)."""
        regrets = regrets + instantaneous
        if self.plus:
            regrets = np.maximum(regrets, 0.0)
        if self.alpha is not None:
            up, down = t ** self.alpha, t ** self.beta
            regrets = regrets * np.where(regrets >= 0, up / (up + 1), down / (down + 1))
        return regrets

    def average_weight(self, t: int) -> float:
        """The weight of iteration ``t``'s realization plan in the average, ``t ** gamma``."""
        return float(t) ** self.gamma


VARIANTS = {
    "pcfr+": CFRVariant("pcfr+", plus=True, alpha=None, beta=None, gamma=2.0, predictive=True),
    "dcfr": CFRVariant("dcfr", plus=False, alpha=1.5, beta=0.0, gamma=2.0),
    "dcfr+": CFRVariant("dcfr+", plus=True, alpha=1.5, beta=0.0, gamma=4.0),
    "lcfr": CFRVariant("lcfr", plus=False, alpha=1.0, beta=1.0, gamma=1.0),
    "cfr+": CFRVariant("cfr+", plus=True, alpha=None, beta=None, gamma=1.0),
}
"""The variants by name (see the module docstring)."""


def variant_named(variant: str | CFRVariant) -> CFRVariant:
    """``variant`` itself, or the member of :data:`VARIANTS` it names; ``ValueError`` naming
    the accepted names otherwise."""
    if isinstance(variant, CFRVariant):
        return variant
    if variant not in VARIANTS:
        raise ValueError(f"unknown CFR variant {variant!r}; accepted: {', '.join(VARIANTS)}")
    return VARIANTS[variant]


__all__ = ["VARIANTS", "CFRVariant", "variant_named"]
