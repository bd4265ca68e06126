"""PSRO variants (``--algorithm``): what the meta-strategy is and which best responses to train.

An algorithm has ``name`` and four methods on the run's state:

- ``meta(state) -> mixtures``: the meta-strategy, one 1-D mixture per player (what the
  opponents of the next best responses play, and what exploitability measures);
- ``targets(state) -> [Target]``: the best responses to train next
  (:class:`psro.oracles.Target`: a player and the opponents' weights it trains against);
- ``expand(state) -> [member]``: members the algorithm adds itself before evaluation (XDO's
  restricted-game equilibrium; none for the others);
- ``stop(state) -> str | None``: a stop reason of its own (XDO: ``restricted_game_complete``);

and optional ones (:class:`~psro.algorithms.base.Algorithm` has the defaults):
``admit(state, members) -> members``, which of the oracle's new members join (JPSRO drops
duplicates); ``metrics(state) -> dict``, columns of its own in the metrics row (JPSRO's
``gap``); ``record(state) -> dict``, data of its own saved with each iteration's mixtures, and
``restore(state)``, which reads it back on a resume (JPSRO's joint distribution);
``chosen_settings() -> dict``, RunConfig fields left unset whose value it chose (XDO's
``xdo_solver``), recorded in the run's config as they ran.

Each algorithm is registered with an :class:`~psro.algorithms.base.AlgorithmEntry` that says
what it reads (settings, meta-solver kind) and what it needs (the walked tree, a number of
players, a zero-sum game, oracle capabilities); :func:`register` adds one from outside.

Built in:

- ``psro``: the meta-solver's mixture; one best response per player against it
  (:class:`psro.algorithms.base.PSROAlgorithm`).
- ``anytime``: the least exploitable mixture of each population, :mod:`psro.algorithms.anytime`
  (exact, by LP) and :mod:`psro.algorithms.anytime_rm` (by regret matching).
- ``rectified``: PSRO-rN, :mod:`psro.algorithms.rectified`.
- ``xdo``: extensive-form double oracle, :mod:`psro.algorithms.xdo`.
- ``jpsro``: joint PSRO for n-player general-sum games, :mod:`psro.algorithms.jpsro`.
- ``pipeline``: pipeline PSRO, K PPO learners per player at once, :mod:`psro.algorithms.pipeline`.
- ``diverse``: Diverse PSRO, best responses that also diversify their population,
  :mod:`psro.algorithms.diverse`.
"""

from __future__ import annotations

from collections.abc import Callable

from psro.algorithms import anytime, diverse, jpsro, pipeline, rectified, xdo
from psro.algorithms.base import SUPPORT_TOL, Algorithm, AlgorithmEntry, PSROAlgorithm
from psro.algorithms.hints import plain_psro_hint
from psro.context import GameContext
from psro.errors import ConfigError


def _psro(context: GameContext, meta_solver: Callable) -> PSROAlgorithm:
    """The registry's factory of ``psro``."""
    return PSROAlgorithm(meta_solver, context.config.meta_solver)


ALGORITHM_SETTINGS = ("pipeline_width", "anytime_rounds", "anytime_episodes", "xdo_solver",
                      "xdo_expansion", "diversity")
"""RunConfig fields that only some algorithms read (each declares which, in ``settings``)."""

ALGORITHMS: dict[str, AlgorithmEntry] = {
    "psro": AlgorithmEntry(_psro, hint=plain_psro_hint), "anytime": anytime.ENTRY,
    "rectified": rectified.ENTRY, "xdo": xdo.ENTRY, "jpsro": jpsro.ENTRY,
    "pipeline": pipeline.ENTRY, "diverse": diverse.ENTRY,
}
"""The algorithms by name."""


def register(name: str, entry: AlgorithmEntry) -> None:
    """Make the algorithm of ``entry`` available as ``name`` (``--algorithm NAME``).
    Registering a taken name is a :class:`ConfigError`."""
    if not isinstance(name, str) or not name or name in ALGORITHMS:
        raise ConfigError(f"algorithm {name!r} is already registered or not a name")
    ALGORITHMS[name] = entry


def get(name: str) -> AlgorithmEntry:
    """The registry entry of algorithm ``name``; :class:`ConfigError` listing the names."""
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; accepted: {', '.join(ALGORITHMS)}")
    return ALGORITHMS[name]


def names() -> tuple[str, ...]:
    """Every registered algorithm name."""
    return tuple(ALGORITHMS)


def build(context: GameContext, meta_solver: Callable | None):
    """The run's algorithm (``context.config.algorithm``), built by its factory."""
    return get(context.config.algorithm).factory(context, meta_solver)


__all__ = ["ALGORITHMS", "ALGORITHM_SETTINGS", "SUPPORT_TOL", "Algorithm", "AlgorithmEntry",
           "PSROAlgorithm", "build", "get", "names", "register"]
