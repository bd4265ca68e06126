"""Population heuristics as meta-solvers. The newest population member is the last index.

Each takes a game (list of per-player payoff arrays over the populations, see
:mod:`solvers.validation`) and returns one mixture per player: the distribution over that
player's population from which the *other* players' next best responses draw opponents.
"""

from __future__ import annotations

import numpy as np

from solvers.bimatrix import nash
from solvers.errors import OptionError
from solvers.iterative import _check_range
from solvers.validation import PayoffError, as_payoffs

PFSP_WEIGHTINGS = ("hard", "variance")


def uniform(payoffs) -> list[np.ndarray]:
    """Uniform over every member: fictitious play over the pool."""
    shape = as_payoffs(payoffs)[0].shape
    return [np.full(n, 1.0 / n) for n in shape]


def latest(payoffs) -> list[np.ndarray]:
    """All weight on the newest member: pure self-play."""
    shape = as_payoffs(payoffs)[0].shape
    return [np.eye(n)[-1] for n in shape]


def latest_mix(payoffs, p: float = 0.8) -> list[np.ndarray]:
    """The newest member with probability ``p``, else uniform over the earlier members (the
    classic 80/20 self-play scheme). A population of one member gets all the weight."""
    p = _check_range(p, "p", 0.0, 1.0)
    shape = as_payoffs(payoffs)[0].shape
    out = []
    for n in shape:
        if n == 1:
            out.append(np.ones(1))
            continue
        mix = np.full(n, (1.0 - p) / (n - 1))
        mix[-1] = p
        out.append(mix)
    return out


def _learner_win_rates(arrays: list[np.ndarray], player: int) -> np.ndarray:
    """For each member i of ``player``'s population, the other players' newest members' payoff
    against it (everyone else at their newest member), rescaled to [0, 1] by the range of the
    learner's payoffs over the table and averaged over the learners."""
    shape = arrays[0].shape
    rates = np.zeros(shape[player])
    for q, u in enumerate(arrays):
        if q == player:
            continue
        index = [n - 1 for n in shape]
        index[player] = slice(None)
        values = u[tuple(index)]
        lo, hi = float(u.min()), float(u.max())
        rates += (values - lo) / (hi - lo) if hi > lo else 0.5
    return rates / (len(shape) - 1)


def pfsp(payoffs, weighting: str = "hard", exponent: float = 2.0) -> list[np.ndarray]:
    """Prioritized fictitious self-play (Vinyals et al. 2019).

    Member i of player p's population is weighted by ``f(w_i)``, where ``w_i`` in [0, 1] is how
    well the other players' newest members do against it (their payoff against i, rescaled by
    the range of their payoffs in the table). ``weighting="hard"``: ``f(w) = (1 - w)^exponent``,
    so training goes where the learner loses (the curriculum rule P*(d) ~ P0(d)(1 - p(d)));
    ``"variance"``: ``f(w) = w (1 - w)``, opponents of similar strength. All-zero weights fall
    back to uniform.
    """
    if weighting not in PFSP_WEIGHTINGS:
        raise OptionError(f"unknown weighting {weighting!r}; accepted: "
                         f"{', '.join(PFSP_WEIGHTINGS)}")
    exponent = _check_range(exponent, "exponent", 0.0, 1e6, lo_open=True)
    arrays = as_payoffs(payoffs)
    out = []
    for p, n in enumerate(arrays[0].shape):
        w = _learner_win_rates(arrays, p)
        weights = (1.0 - w) ** exponent if weighting == "hard" else w * (1.0 - w)
        total = weights.sum()
        out.append(weights / total if total > 0 else np.full(n, 1.0 / n))
    return out


def rectified(payoffs, method: str = "auto") -> list[np.ndarray]:
    """Rectified Nash (PSRO_rN, Balduzzi et al. 2019) for two-player games.

    Solves the meta-game's Nash ``(x, y)`` with :func:`solvers.nash` (``method``), then keeps
    the Nash weight only on the members that the other player's newest member does not beat:
    member i of player 0 keeps ``x_i`` when ``B[i, -1] <= x^T B y`` (the learner earns no more
    against i than its equilibrium payoff), and symmetrically for player 1. Mixtures are
    renormalised; if every member is beaten, the Nash mixture is returned unchanged.
    """
    arrays = as_payoffs(payoffs)
    if len(arrays) != 2:
        raise PayoffError(f"rectified needs a two-player game; this one has {len(arrays)} "
                          f"players")
    A, B = arrays
    x, y = nash(arrays, method=method)
    scale = max(float(np.abs(A).max()), float(np.abs(B).max()), 1e-300)
    tol = 1e-9 * scale
    kept_x = np.where(B[:, -1] <= x @ B @ y + tol, x, 0.0)
    kept_y = np.where(A[-1, :] <= x @ A @ y + tol, y, 0.0)
    return [k / k.sum() if k.sum() > 0 else m for k, m in ((kept_x, x), (kept_y, y))]
