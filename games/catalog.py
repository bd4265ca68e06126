"""Normal-form games we ship: payoff arrays built from named, seeded parameters.

Each builder returns the list of per-player payoff arrays (``payoffs[p][i_0, ..., i_{N-1}]``);
:func:`games.load` turns them into pyspiel matrix or tensor games so the rest of the toolkit
sees one kind of game.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class CatalogEntry:
    """A catalogue game: its builder, default parameters and one line saying what it shows."""

    build: Callable[..., list[np.ndarray]]
    defaults: dict[str, float | int]
    summary: str
    strategies: Callable[..., int] | None = None
    """Strategies per player for given parameters, known before building (None: unknown)."""
    minimum: dict[str, float] = field(default_factory=dict)
    """The smallest accepted value of each bounded parameter (others: any finite value)."""


def rock_paper_scissors() -> list[np.ndarray]:
    """Rock-paper-scissors: unique Nash equilibrium uniform, value 0."""
    A = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]], float)
    return [A, -A]


def biased_rock_paper_scissors(a: float = 1.0, b: float = 3.0, c: float = 2.0):
    """RPS with unequal stakes: paper beats rock by ``a``, scissors beat paper by ``b``, rock
    beats scissors by ``c``. The unique Nash equilibrium is ``(b, c, a) / (a + b + c)``
    (1/2, 1/3, 1/6 by default), value 0."""
    A = np.array([[0, -a, c], [a, 0, -b], [-c, b, 0]], float)
    return [A, -A]


def disc_game(n: int = 20, seed: int = 0) -> list[np.ndarray]:
    """The disc game (Balduzzi et al. 2019): n agents at seeded random points ``v_i`` of the
    unit disc; ``A[i, j] = v_i^T [[0, -1], [1, 0]] v_j``. Purely cyclic, symmetric zero-sum."""
    rng = np.random.default_rng(seed)
    radius = np.sqrt(rng.uniform(0, 1, n))
    angle = rng.uniform(0, 2 * np.pi, n)
    v = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1)
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    A = v @ rot @ v.T
    return [A, -A]


def colonel_blotto(coins: int = 5, fields: int = 3) -> list[np.ndarray]:
    """Colonel Blotto scored by the margin (catalogue name ``blotto_margin``): each player
    splits ``coins`` over ``fields``; the payoff is the number of fields won minus the number
    lost (ties win nothing). Symmetric zero-sum. OpenSpiel's ``blotto`` is the same game scored
    by the majority (the sign of this payoff: +1, 0 or -1); ``blotto(...)`` loads that one."""
    strategies = [s for s in itertools.product(range(coins + 1), repeat=fields)
                  if sum(s) == coins]
    S = np.array(strategies)
    A = np.sign(S[:, None, :] - S[None, :, :]).sum(axis=2).astype(float)
    return [A, -A]


def random_zero_sum(n: int = 10, m: int = 0, seed: int = 0) -> list[np.ndarray]:
    """Random n x m zero-sum game (``m = 0`` means square), standard normal payoffs."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, m or n))
    return [A, -A]


def random_general_sum(n: int = 10, m: int = 0, seed: int = 0) -> list[np.ndarray]:
    """Random n x m general-sum game (``m = 0`` means square), independent normal payoffs."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, m or n)), rng.standard_normal((n, m or n))]


def spinning_top(n: int = 50, cycle: float = 4.0, seed: int = 0) -> list[np.ndarray]:
    """A "spinning top" game (Czarnecki et al. 2020): a transitive axis plus cycles that are
    widest at middling strength.

    Agent i has strength ``s_i = i / (n - 1)``, a seeded random angle ``theta_i`` and radius
    ``r_i = 4 s_i (1 - s_i)``; ``A[i, j] = (s_i - s_j) + cycle * r_i r_j sin(theta_i - theta_j)``.
    Weak and strong agents are ordered transitively; the middle is cyclic, which is where pure
    self-play goes round in circles. With the defaults the strongest agent alone is the Nash
    equilibrium, yet self-play from the uniform start stays in the cyclic middle (exploitability
    about 4 after 30 iterations, where Nash PSRO reaches 0). Symmetric zero-sum.
    """
    rng = np.random.default_rng(seed)
    s = np.linspace(0.0, 1.0, n)
    theta = rng.uniform(0, 2 * np.pi, n)
    r = 4 * s * (1 - s)
    A = (s[:, None] - s[None, :]) + cycle * np.outer(r, r) * np.sin(theta[:, None] - theta[None, :])
    return [A, -A]


CATALOG: dict[str, CatalogEntry] = {
    "rps": CatalogEntry(rock_paper_scissors, {}, "rock-paper-scissors"),
    "biased_rps": CatalogEntry(biased_rock_paper_scissors, {"a": 1.0, "b": 3.0, "c": 2.0},
                               "RPS with unequal stakes; Nash (1/2, 1/3, 1/6)"),
    "disc": CatalogEntry(disc_game, {"n": 20, "seed": 0}, "the disc game: purely cyclic",
                         lambda n, seed: n, {"n": 1, "seed": 0}),
    "blotto_margin": CatalogEntry(colonel_blotto, {"coins": 5, "fields": 3},
                                  "Colonel Blotto scored by fields won minus fields lost "
                                  "(OpenSpiel's blotto scores +1/0/-1 by the majority)",
                                  lambda coins, fields: math.comb(coins + fields - 1,
                                                                  fields - 1),
                                  {"coins": 0, "fields": 1}),
    "random_zero_sum": CatalogEntry(random_zero_sum, {"n": 10, "m": 0, "seed": 0},
                                    "random zero-sum matrix game",
                                    lambda n, m, seed: max(n, m or n),
                                    {"n": 1, "m": 0, "seed": 0}),
    "random_general_sum": CatalogEntry(random_general_sum, {"n": 10, "m": 0, "seed": 0},
                                       "random general-sum bimatrix game",
                                       lambda n, m, seed: max(n, m or n),
                                       {"n": 1, "m": 0, "seed": 0}),
    "spinning_top": CatalogEntry(spinning_top, {"n": 50, "cycle": 4.0, "seed": 0},
                                 "transitive strength plus cycles in the middle",
                                 lambda n, cycle, seed: n, {"n": 2, "seed": 0}),
}


CATALOGUE_VERSION = 2
"""Run directories record it (``catalogue_version`` in ``run.json``): 1 (or none), runs from
before :data:`RENAMED`; 2, runs whose game strings name today's catalogue."""
RENAMED = {"blotto": "blotto_margin"}
"""Catalogue names that were renamed because they hid an OpenSpiel game of the same name (the
catalogue's ``blotto`` scored the margin, OpenSpiel's the majority): run directories written
before the rename name the catalogue game by its old name (:func:`current_spec`)."""


def current_spec(spec: str) -> str:
    """``spec`` of a run written before :data:`RENAMED`, naming the catalogue game it ran:
    ``blotto(coins=10,fields=5)`` -> ``blotto_margin(coins=10,fields=5)``."""
    name, paren, rest = spec.partition("(")
    new = RENAMED.get(name.strip())
    return spec if new is None else new + paren + rest

