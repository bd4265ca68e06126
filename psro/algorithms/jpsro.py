"""JPSRO, joint PSRO for n-player general-sum games (Marris et al. 2021), on the walked
sequence form.

The meta-strategy is a *joint* distribution ``sigma`` over profiles of population members
(an array of the payoff table's shape), from a correlated meta-solver: ``cce`` (the default
under ``--algorithm jpsro``), ``ce``, one registered with :func:`solvers.register_joint`, or
any other meta-solver, whose mixtures then give the product distribution
(:func:`solvers.get_joint`). Each iteration:

1. best responses against ``sigma``'s conditionals. With ``ce`` (correlated equilibrium), one
   per player p and member k that ``sigma`` recommends to p (positive marginal), against the
   other players' profiles drawn from ``sigma`` given that p is told k; with every other
   meta-solver (coarse correlated equilibrium), one per player against the other players'
   profiles drawn from ``sigma`` (their correlated marginal, not the product of their
   mixtures). The exact oracle answers by one backward pass on the correlated reach of the
   leaves; PPO draws one correlated profile per episode;
2. at most one new member per player joins: of its best responses that are not copies of a
   member, the one whose deviation from ``sigma`` gains most (for CE, weighted by the
   recommendation's probability: OpenSpiel's default ``br_selection="largest_gap"``, which
   keeps the table from growing by a member per recommendation), if it gains at all. With the
   exact oracle, when no player gets a new member no player can gain by deviating, and the
   run stops with reason ``no_novel_best_response``;
3. the payoff table grows and the meta-solver gives the next ``sigma``.

Metrics: ``gap`` is the exact (C)CE gap of ``sigma`` in the full game, the largest gain any
player gets by deviating: for CCE, ``max_p [max_pi u_p(pi, sigma_-p) - u_p(sigma)]`` over
whole policies ``pi``; for CE, per recommendation,
``max_p sum_k [max_pi u_p(pi, sigma(. | k)) - u_p(k, sigma(. | k))] P(k)``; ``gap_p{p}`` is
each player's gain and ``gap_kind`` says which. ``exploitability`` and ``nash_conv`` still
measure the product of ``sigma``'s marginals (``state.mixtures``), which is what
``load_run(dir).meta_policy()`` returns; ``load_run(dir).joint`` is ``sigma`` itself. The
joint of every iteration is saved with its mixtures (``mixtures.jsonl``, ``joint`` as the
profiles of positive probability and their probabilities).

Games small enough to walk, any number of players, general-sum.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import solvers
from psro import oracles
from psro.algorithms.base import Algorithm, AlgorithmEntry
from psro.context import GameContext
from psro.errors import MetaSolverError
from psro.evaluation.exact import PlanStack
from psro.extensive_form.members import Keys
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.metrics_row import per_player
from psro.oracles.spec import Target
from psro.state import RunState, joint_from_record, joint_record

DIST_TOL = 1e-9
"""Joint probabilities at or below this are set to 0 (and the rest renormalised) before the
joint is used: the LP solvers leave entries of this size where the answer has none."""
GAIN_RTOL = 1e-7
"""A best response joins only when it gains more than this times the largest payoff by
deviating from the joint (the CE/CCE solvers' own tolerance is 1e-8 of it)."""


def recommendation(joint: np.ndarray, player: int, k: int) -> np.ndarray:
    """``joint`` with every profile in which ``player`` is not told member ``k`` set to 0
    (sums to the probability that ``player`` is told ``k``)."""
    out = np.zeros_like(joint)
    index = (slice(None),) * player + (k,)
    out[index] = joint[index]
    return out


class JPSROAlgorithm(Algorithm):
    """Joint PSRO (see the module docstring)."""

    name = "jpsro"

    def __init__(self, tree: SequenceFormGame, joint_solver: Callable, solver_name: str,
                 exact_oracle: bool = True):
        self.tree = tree
        self.exact_oracle = exact_oracle
        self.joint_solver, self.solver_name = joint_solver, solver_name
        self.correlated = solver_name == "ce"
        """CE best responses (one per recommendation) rather than CCE ones."""
        self.stack = PlanStack(tree)
        self.joint: np.ndarray | None = None
        """The meta-strategy's joint distribution over profiles (an array of the payoff
        table's shape); ``state.mixtures`` are its marginals."""

    @property
    def gap_kind(self) -> str:
        """``"ce"`` or ``"cce"``: which equilibrium the gap measures."""
        return "ce" if self.correlated else "cce"

    def record(self, state: RunState) -> dict:
        """The joint, saved with each iteration's mixtures."""
        return {"joint": joint_record(self.joint)}

    def restore(self, state: RunState) -> None:
        """The joint of the last saved iteration (a resumed run)."""
        self.joint = joint_from_record(state.mixture_history[-1]["joint"])

    def meta(self, state: RunState) -> list[np.ndarray]:
        """Solve the joint (kept as :attr:`joint`); returns its marginals."""
        try:
            joint = np.asarray(self.joint_solver(state.table.as_game()), float)
        except (solvers.SolverError, solvers.PayoffError) as err:
            raise MetaSolverError(f"meta-solver {self.solver_name!r} failed at iteration "
                                  f"{state.iteration}: {err} (the previous iteration's "
                                  f"checkpoint is kept)") from None
        if joint.shape != state.table.shape or not np.all(np.isfinite(joint)) \
                or joint.max() <= 0:
            raise MetaSolverError(f"meta-solver {self.solver_name!r} returned no joint "
                                  f"distribution of shape {state.table.shape}")
        joint = np.where(joint > DIST_TOL, joint, 0.0)
        self.joint = joint / joint.sum()
        return solvers.marginals(self.joint)

    def _recommendations(self, state: RunState) -> list[tuple[int, int, np.ndarray]]:
        """``(player, tag, conditional weights)`` of every best response to train: tag 0 and
        the whole joint per player (CCE), or tag k + 1 and the joint given recommendation k
        (CE)."""
        joint = self.joint
        out = []
        for p in range(state.num_players):
            if not self.correlated:
                out.append((p, 0, joint))
                continue
            for k in np.flatnonzero(state.mixtures[p] > 0):
                out.append((p, int(k) + 1, recommendation(joint, p, int(k))))
        return out

    def targets(self, state: RunState) -> list[Target]:
        """One target per player (CCE) or per player and recommended member (CE), each with
        its correlated opponents."""
        return [Target(p, tuple(state.mixtures), tag=tag, joint=weights)
                for p, tag, weights in self._recommendations(state)]

    def admit(self, state: RunState, members: list) -> list:
        """At most one new member per player: of its new best responses that are not copies
        of a member it has, the one that gains most by deviating from the joint (for CE, the
        gain over its recommended member times the recommendation's probability, as
        OpenSpiel's ``br_selection="largest_gap"``), and only when that gain exceeds
        ``GAIN_RTOL`` times the largest payoff. Each admitted member records its ``gain``."""
        scale = max(float(np.abs(state.table.values).max()), 1e-12)
        out = []
        for p in range(state.num_players):
            best, best_gain = None, GAIN_RTOL * scale
            for member in members:
                if member.player != p or any(np.array_equal(m.probs, member.probs)
                                             for m in state.populations[p]):
                    continue
                gain = self._gain(state, member)
                if gain > best_gain:
                    best, best_gain = member, gain
            if best is not None:
                best.metadata[Keys.GAIN] = best_gain
                out.append(best)
        return out

    def _weights(self, state: RunState, member) -> np.ndarray:
        """The joint weights a member was trained against (its target tag is k + 1 for the
        CE recommendation k)."""
        tag = member.metadata.get(Keys.TARGET, 0)
        return recommendation(self.joint, member.player, tag - 1) if tag else self.joint

    def _gain(self, state: RunState, member) -> float:
        """Exact gain of playing ``member`` instead of following the joint (weighted by the
        recommendation's probability for CE)."""
        p, weights = member.player, self._weights(state, member)
        reach = self.stack.correlated_reach(state.populations, p, weights)
        plan = member.realization_plan(self.tree)[self.tree.leaf_seqs[p]]
        value = float(np.sum(self.tree.leaf_chance * self.tree.leaf_returns[p] * reach * plan))
        return value - float(np.sum(weights * state.table.values[p]))

    def stop(self, state: RunState) -> str | None:
        """``no_novel_best_response`` when the last iteration added no member and the
        best responses are exact (with an approximate oracle the next iteration trains again,
        with new seeds)."""
        if self.exact_oracle and state.iteration > 0 and not any(
                pop[-1].metadata.get("iteration") == state.iteration
                for pop in state.populations):
            return "no_novel_best_response"
        return None

    def columns(self, num_players: int) -> tuple[str, ...]:
        """The keys of :meth:`metrics`."""
        return ("gap", "gap_kind", *per_player("gap_p", num_players))

    def metrics(self, state: RunState) -> dict:
        """The exact (C)CE gap of the joint in the full game, and each player's part."""
        gains = np.zeros(state.num_players)
        values = state.table.values
        for p, _, weights in self._recommendations(state):
            reach = self.stack.correlated_reach(state.populations, p, weights)
            _, deviation = self.tree.best_response_to_reach(p, reach)
            gains[p] += max(deviation - float(np.sum(weights * values[p])), 0.0)
        return {"gap": float(gains.max()), "gap_kind": self.gap_kind,
                **{f"gap_p{p}": float(g) for p, g in enumerate(gains)}}


def _jpsro(context: GameContext, meta_solver) -> JPSROAlgorithm:
    """The registry's factory: the joint meta-solver; the gap is measured on the walked
    tree, and an oracle of exact best responses lets the run stop by itself."""
    config = context.config
    exact = "exact" in oracles.get(config.oracle).capabilities
    return JPSROAlgorithm(context.require_tree(NEEDS_TREE),
                          solvers.get_joint(config.meta_solver, **config.meta_solver_options),
                          config.meta_solver, exact_oracle=exact)


NEEDS_TREE = "algorithm 'jpsro' (its gap is measured on the walked tree)"
ENTRY = AlgorithmEntry(_jpsro, meta_solver="joint", default_meta_solver="cce",
                       needs=lambda config, walked: frozenset({"correlated"}),
                       needs_tree=lambda config: NEEDS_TREE)


__all__ = ["DIST_TOL", "GAIN_RTOL", "JPSROAlgorithm", "recommendation"]
