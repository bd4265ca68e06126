"""Meta-solvers by name: ``get(name, **options)`` returns ``f(payoffs) -> mixtures``, and
``get_joint(name, **options)`` returns ``f(payoffs) -> joint``, a distribution over pure
profiles (an array of the game's shape summing to 1: the equilibrium itself for the
correlated solvers ``ce``/``cce`` and any registered with :func:`register_joint`, the product
of the mixtures for every other solver).

Configs and the command line name meta-solvers by string. Options are checked when the solver
is made: an unknown name, an unknown option or a bad option value raises
:class:`~solvers.OptionError` (a ``ValueError``) that
lists what is accepted, so a misspelt option is never ignored silently.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence, Sized

import numpy as np

from solvers import heuristics, iterative
from solvers.alpharank import alpharank
from solvers.bimatrix import NASH_METHODS, nash
from solvers.correlated import (
    OBJECTIVES,
    coarse_correlated_equilibrium,
    correlated_equilibrium,
)
from solvers.errors import OptionError, PayoffError
from solvers.validation import as_joint, as_mixture

MetaSolver = Callable[..., list[np.ndarray]]
JointSolver = Callable[..., np.ndarray]


def _check_choice(value, name: str, choices) -> None:
    if value not in choices:
        raise OptionError(f"{name} must be one of {', '.join(map(str, choices))}; got {value!r}")


def _nash(method: str = "auto") -> MetaSolver:
    _check_choice(method, "method", NASH_METHODS)
    return lambda payoffs: nash(payoffs, method=method)


def _uniform() -> MetaSolver:
    return heuristics.uniform


def _latest() -> MetaSolver:
    return heuristics.latest


def _latest_mix(p: float = 0.8) -> MetaSolver:
    iterative._check_range(p, "p", 0.0, 1.0)
    return lambda payoffs: heuristics.latest_mix(payoffs, p=p)


def _pfsp(weighting: str = "hard", exponent: float = 2.0) -> MetaSolver:
    _check_choice(weighting, "weighting", heuristics.PFSP_WEIGHTINGS)
    iterative._check_range(exponent, "exponent", 0.0, 1e6, lo_open=True)
    return lambda payoffs: heuristics.pfsp(payoffs, weighting=weighting, exponent=exponent)


def _rectified(method: str = "auto") -> MetaSolver:
    _check_choice(method, "method", NASH_METHODS)
    return lambda payoffs: heuristics.rectified(payoffs, method=method)


def _prd(iterations: int = 10000, step: float = 0.05, exploration: float = 1e-10,
         average_over_last: float = 1.0) -> MetaSolver:
    iterative._check_positive_int(iterations, "iterations")
    iterative._check_range(step, "step", 0.0, 1.0, lo_open=True)
    iterative._check_range(exploration, "exploration", 0.0, 1.0)
    iterative._check_range(average_over_last, "average_over_last", 0.0, 1.0, lo_open=True)
    return lambda payoffs: iterative.projected_replicator_dynamics(
        payoffs, iterations=iterations, step=step, exploration=exploration,
        average_over_last=average_over_last)


def _replicator(iterations: int = 10000, step: float = 0.05,
                average_over_last: float = 1.0) -> MetaSolver:
    iterative._check_positive_int(iterations, "iterations")
    iterative._check_range(step, "step", 0.0, 1.0, lo_open=True)
    iterative._check_range(average_over_last, "average_over_last", 0.0, 1.0, lo_open=True)
    return lambda payoffs: iterative.replicator_dynamics(
        payoffs, iterations=iterations, step=step, average_over_last=average_over_last)


def _fictitious_play(iterations: int = 10000, seed: int = 0) -> MetaSolver:
    iterative._check_positive_int(iterations, "iterations")
    iterative._check_seed(seed)
    return lambda payoffs: iterative.fictitious_play(payoffs, iterations=iterations, seed=seed)


def _regret_matching(iterations: int = 10000, plus: bool = True) -> MetaSolver:
    iterative._check_positive_int(iterations, "iterations")
    iterative._check_bool(plus, "plus")
    return lambda payoffs: iterative.regret_matching(payoffs, iterations=iterations, plus=plus)


def _alpharank(alpha: float = 100.0, population_size: int = 50,
               perturbation: float = 0.0) -> MetaSolver:
    iterative._check_range(alpha, "alpha", 0.0, 1e12, lo_open=True)
    iterative._check_positive_int(population_size, "population_size")
    iterative._check_range(perturbation, "perturbation", 0.0, 1e-3)
    return lambda payoffs: alpharank(payoffs, alpha=alpha, population_size=population_size,
                                     perturbation=perturbation).marginals


def _ce_joint(objective: str = "entropy") -> JointSolver:
    _check_choice(objective, "objective", OBJECTIVES)
    return lambda payoffs: correlated_equilibrium(payoffs, objective=objective).joint


def _cce_joint(objective: str = "entropy") -> JointSolver:
    _check_choice(objective, "objective", OBJECTIVES)
    return lambda payoffs: coarse_correlated_equilibrium(payoffs, objective=objective).joint


def _marginals_of(joint_factory: Callable[..., JointSolver]) -> Callable[..., MetaSolver]:
    """A mixture factory with ``joint_factory``'s options whose solvers return the marginals
    of its joint distributions."""
    @functools.wraps(joint_factory)
    def factory(**opts) -> MetaSolver:
        solver = joint_factory(**opts)
        return lambda payoffs: marginals(solver(payoffs))
    return factory


def marginals(joint: np.ndarray) -> list[np.ndarray]:
    """Each player's marginal of a joint distribution over pure profiles (shape
    ``(n_0, ..., n_{N-1})``): ``N`` 1-D arrays. :class:`~solvers.PayoffError` for an array
    that is not a distribution (:func:`~solvers.validation.as_joint`), also when a registered
    joint solver returns one."""
    joint = as_joint(joint)
    n = joint.ndim
    return [joint.sum(axis=tuple(q for q in range(n) if q != p)) for p in range(n)]


def product_joint(mixtures: list[np.ndarray]) -> np.ndarray:
    """The joint distribution of independent players: the outer product of their mixtures,
    an array of shape ``(len(mixtures[0]), ..., len(mixtures[-1]))``.
    :class:`~solvers.PayoffError` unless ``mixtures`` is a non-empty list of distributions."""
    if isinstance(mixtures, (str, bytes, np.ndarray)) or not isinstance(mixtures, Sequence) \
            or not mixtures:
        raise PayoffError("mixtures must be a non-empty list with one 1-D mixture per player")
    joint = np.ones(())
    for p, m in enumerate(mixtures):
        as_mixture(m, len(m) if isinstance(m, Sized) else 1,
                   f"mixtures[{p}]")  # checked; multiplied as given
        joint = np.multiply.outer(joint, np.asarray(m, float))
    return joint


_JOINT_FACTORIES: dict[str, Callable[..., JointSolver]] = {"ce": _ce_joint, "cce": _cce_joint}


_FACTORIES: dict[str, Callable[..., MetaSolver]] = {
    "nash": _nash,
    "uniform": _uniform,
    "latest": _latest,
    "latest_mix": _latest_mix,
    "pfsp": _pfsp,
    "rectified": _rectified,
    "prd": _prd,
    "replicator": _replicator,
    "fictitious_play": _fictitious_play,
    "regret_matching": _regret_matching,
    "alpharank": _alpharank,
    "ce": _marginals_of(_ce_joint),
    "cce": _marginals_of(_cce_joint),
}

DESCRIPTIONS = {
    "nash": "Nash equilibrium, two players (zero-sum LP or Lemke-Howson)",
    "uniform": "uniform over the pool (fictitious play)",
    "latest": "newest member only (self-play)",
    "latest_mix": "newest with probability p, else uniform over the rest",
    "pfsp": "prioritized fictitious self-play, weighted by the learner's losses",
    "rectified": "rectified Nash (PSRO_rN), two players",
    "prd": "projected replicator dynamics, N players",
    "replicator": "replicator dynamics, N players",
    "fictitious_play": "fictitious play, N players",
    "regret_matching": "regret matching(+), N players",
    "alpharank": "alpha-rank marginals, N players",
    "ce": "correlated equilibrium marginals (max entropy / Gini / welfare), N players",
    "cce": "coarse correlated equilibrium marginals, N players",
}


_PAYOFF_FREE = {"uniform", "latest", "latest_mix"}
"""Meta-solvers whose mixtures depend on the table's shape only, never on its values."""


def reads_payoffs(name: str) -> bool:
    """Whether meta-solver ``name`` reads the payoff values (False for ``uniform``, ``latest``
    and ``latest_mix``, whose mixtures depend only on the population sizes, and for solvers
    registered with ``reads_payoffs=False``), so that a caller can skip estimating a table
    nothing reads."""
    return name not in _PAYOFF_FREE


def register(name: str, factory: Callable[..., MetaSolver], description: str = "",
             reads_payoffs: bool = True) -> None:
    """Make ``factory(**options) -> f(payoffs) -> mixtures`` available as meta-solver
    ``name``: :func:`get` then checks options against the factory's keyword arguments and
    wraps the result, so it runs under ``meta_solver = "name"`` like a built-in.
    ``reads_payoffs=False`` declares that its mixtures depend on the table's shape only
    (:func:`reads_payoffs`). Registering a taken name is an :class:`OptionError`."""
    if not isinstance(name, str) or not name:
        raise OptionError(f"a meta-solver name must be a non-empty string; got {name!r}")
    if name in _FACTORIES:
        raise OptionError(f"meta-solver {name!r} is already registered")
    _FACTORIES[name] = factory
    DESCRIPTIONS[name] = description or name
    if not reads_payoffs:
        _PAYOFF_FREE.add(name)


def register_joint(name: str, factory: Callable[..., JointSolver],
                   description: str = "") -> None:
    """Make ``factory(**options) -> f(payoffs) -> joint`` available as meta-solver ``name``:
    :func:`get_joint` returns its joint distributions and :func:`get` their marginals, so it
    runs under ``meta_solver = "name"`` (JPSRO uses the joint). Registering a taken name is an
    :class:`OptionError`."""
    register(name, _marginals_of(factory), description)
    _JOINT_FACTORIES[name] = factory


def names() -> tuple[str, ...]:
    """Every meta-solver name that :func:`get` accepts."""
    return tuple(_FACTORIES)


def options(name: str) -> dict[str, object]:
    """The options a meta-solver accepts, with their defaults."""
    factory = _factory(name)
    return {k: p.default for k, p in inspect.signature(factory).parameters.items()}


def joint_names() -> tuple[str, ...]:
    """The meta-solvers whose :func:`get_joint` is a correlated distribution of their own
    (every other name gives the product of its mixtures)."""
    return tuple(_JOINT_FACTORIES)


def _check_options(name: str, opts: dict) -> None:
    accepted = options(name)
    unknown = sorted(set(opts) - set(accepted))
    if unknown:
        listed = ", ".join(f"{k} (default {v!r})" for k, v in accepted.items()) or "none"
        raise OptionError(f"unknown option(s) {', '.join(unknown)} for meta-solver {name!r}; "
                          f"accepted: {listed}")


def _factory(name: str):
    if not isinstance(name, str) or name not in _FACTORIES:
        raise OptionError(f"unknown meta-solver {name!r}; accepted: {', '.join(_FACTORIES)}")
    return _FACTORIES[name]


def get(name: str, **opts) -> MetaSolver:
    """The meta-solver ``name`` configured with ``opts``: a function ``f(payoffs) -> mixtures``.

    >>> import numpy as np, solvers
    >>> f = solvers.get("latest_mix", p=0.5)
    >>> [m.tolist() for m in f([np.zeros((3, 3)), np.zeros((3, 3))])]
    [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5]]
    """
    factory = _factory(name)
    _check_options(name, opts)
    solver = factory(**opts)

    def meta_solver(payoffs) -> list[np.ndarray]:
        return [np.asarray(m, float) for m in solver(payoffs)]

    meta_solver.__name__ = name
    meta_solver.__doc__ = f"Meta-solver {name!r} with options {opts}: {DESCRIPTIONS[name]}."
    return meta_solver


def get_joint(name: str, **opts) -> JointSolver:
    """The meta-solver ``name`` as ``f(payoffs) -> joint``: a distribution over pure profiles,
    an array of the game's shape summing to 1. For ``ce``, ``cce`` and solvers added with
    :func:`register_joint` it is their correlated distribution (the CE/CCE tolerance of
    :mod:`solvers.correlated`); for every other solver, the product of its mixtures (so a Nash
    solver gives the Nash profile as a joint). Options are checked as :func:`get` does.

    >>> import numpy as np, solvers
    >>> chicken = [np.array([[0, 7], [2, 6]]), np.array([[0, 2], [7, 6]])]
    >>> joint = solvers.get_joint("ce", objective="welfare")(chicken)
    >>> joint.round(6).tolist()
    [[0.0, 0.25], [0.25, 0.5]]
    """
    _factory(name)
    _check_options(name, opts)
    if name in _JOINT_FACTORIES:
        solver = _JOINT_FACTORIES[name](**opts)

        def joint_solver(payoffs) -> np.ndarray:
            return np.asarray(solver(payoffs), float)
    else:
        mixtures = get(name, **opts)

        def joint_solver(payoffs) -> np.ndarray:
            return product_joint(mixtures(payoffs))

    joint_solver.__name__ = name
    joint_solver.__doc__ = f"Joint meta-solver {name!r} with options {opts}."
    return joint_solver
