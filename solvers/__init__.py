"""Standalone meta-solvers for normal-form games (numpy, scipy and nashpy; pygambit optional).

Conventions: a game is a list of per-player payoff arrays, ``payoffs[p][i_0, ..., i_{N-1}]``
being player p's payoff when each player q plays its strategy ``i_q``; a single 2-D array
``A`` is the zero-sum game ``[A, -A]``. A solution is a list of 1-D mixtures, one per player.

>>> import numpy as np, solvers
>>> rps = np.array([[0, -1, 1], [1, 0, -1], [-1, 1, 0]])
>>> x, y, value = solvers.zero_sum_nash(rps)
>>> x.round(6).tolist(), round(value, 9)
([0.333333, 0.333333, 0.333333], 0.0)
"""

from solvers._version import __version__
from solvers.alpharank import AlphaRank, alpharank
from solvers.bimatrix import NASH_RTOL, equilibria, nash
from solvers.correlated import (
    CE_RTOL,
    CorrelatedEquilibrium,
    coarse_correlated_equilibrium,
    correlated_equilibrium,
    correlated_gains,
)
from solvers.diversity import (
    cardinality_gradient,
    expected_cardinality,
    joined_cardinality,
    population_diversity,
    population_rows,
)
from solvers.errors import OptionError, PayoffError, SolverError, ToolkitError
from solvers.heuristics import latest, latest_mix, pfsp, rectified, uniform
from solvers.iterative import (
    fictitious_play,
    projected_replicator_dynamics,
    regret_matching,
    replicator_dynamics,
)
from solvers.lemke_howson import lemke_howson
from solvers.metrics import (
    action_values,
    deviation_gains,
    expected_payoffs,
    exploitability,
    nash_conv,
)
from solvers.ratings import NashAveraging, elo_ratings, nash_averaging
from solvers.registry import (
    get,
    get_joint,
    joint_names,
    marginals,
    names,
    options,
    product_joint,
    reads_payoffs,
    register,
    register_joint,
)
from solvers.validation import as_joint, as_mixtures, as_payoffs, constant_sum
from solvers.zero_sum import ZERO_SUM_RTOL, ZeroSumSolution, zero_sum_nash

__all__ = ["__version__",
    "AlphaRank", "CE_RTOL", "CorrelatedEquilibrium", "NASH_RTOL", "NashAveraging", "OptionError",
    "PayoffError", "SolverError", "ToolkitError", "ZERO_SUM_RTOL", "ZeroSumSolution",
    "action_values", "alpharank", "as_joint", "as_mixtures", "as_payoffs", "cardinality_gradient",
    "coarse_correlated_equilibrium", "constant_sum", "correlated_equilibrium", "correlated_gains",
    "deviation_gains", "elo_ratings", "equilibria", "expected_cardinality", "expected_payoffs",
    "exploitability", "fictitious_play", "get", "get_joint", "joined_cardinality", "joint_names",
    "latest", "latest_mix", "lemke_howson", "marginals", "names", "nash", "nash_averaging",
    "nash_conv", "options", "pfsp", "population_diversity", "population_rows", "product_joint",
    "projected_replicator_dynamics", "reads_payoffs", "rectified", "register", "register_joint",
    "regret_matching", "replicator_dynamics", "uniform", "zero_sum_nash",
]
