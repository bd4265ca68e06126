"""XDO, extensive-form double oracle (McAleer et al. 2021), on the walked sequence form.

The restricted game is the full game tree in which, at each information set, a player may
take only the actions some best response of its population takes there with positive
probability (the lowest legal action where none does yet). Its equilibrium is a behavioural
policy that can mix at every information set, so it can be far less exploitable than any
mixture of the population. Iteration 0 holds the uniform policy only, so the first best
responses answer uniform play (as the XDO authors' code starts) and act at every information
set; then each iteration:

1. the oracle trains one best response per player against the other player's restricted-game
   equilibrium (a table, which the PPO oracle plays as a tabular opponent);
2. the restricted game grows by the ``xdo_expansion``: ``"responses"``, the actions the new
   best responses take; or ``"improving"`` (with the LP), the actions of positive
   counterfactual regret against the last restricted equilibrium, and the new best responses'
   actions only where none of those is new (:mod:`psro.algorithms.xdo_improving`); without
   one named, :func:`default_expansion`;
3. its equilibrium is solved by the ``xdo_solver`` (without one named, the fastest measured:
   :func:`default_solver`):

   - ``"lp"`` (two-player zero-sum games): exactly, by one sequence-form LP (HiGHS) on the
     restricted sequences, which gives both players (:mod:`psro.extensive_form.sequence_lp`);
   - ``"cfr"``, ``"pcfr"``, ``"dcfr"`` (any game; ``"cfr"`` is the default with more players
     or general-sum payoffs): CFR+, predictive CFR+ or discounted CFR
     (:class:`psro.extensive_form.restricted_cfr.RestrictedCFR`) until the restricted game's
     NashConv is at or below a tolerance that starts at ``CFR_START`` times the largest
     return and halves whenever the full game's NashConv falls below it (the XDO authors'
     schedule), down to ``CFR_FLOOR`` times the largest return, or to the NashConv of the
     run's target exploitability where that is lower (:func:`cfr_floor`). In two-player
     zero-sum games it is warm-started: each new restricted game continues from the previous
     one's regrets (its average restarts). Elsewhere each new restricted game is solved from
     scratch. A restricted game asked again (no best response added an action, the tolerance
     is tighter) continues its run, average included, instead of beginning again. A resumed
     run rebuilds this state by replaying the earlier solves;

4. the equilibrium joins each population as a member (so run directories, resume, reports and
   ``load_run(dir).meta_policy()`` treat it as any member) and the meta-strategy puts all its
   weight on it; exploitability measures it exactly.

The run stops (stop reason ``restricted_game_complete``) when no new best response adds an
action (with a CFR-family solver, only once the newest equilibrium's NashConv is at or below
the floor tolerance: else the next iteration solves the same restricted game more tightly):
the restricted equilibrium is then an equilibrium of the full game (with a CFR-family solver,
to that NashConv). Each row records ``restricted_actions``, the (information
set, action) pairs the restricted game allows.

CFR+ is a no-regret method: in n-player or general-sum games its average profile carries no
equilibrium guarantee, and neither does XDO (three-player Kuhn poker converges; on ``sheriff``
NashConv reaches 2e-4). Games small enough to walk.
"""

from __future__ import annotations

import numpy as np

from psro import oracles
from psro.algorithms.base import Algorithm, AlgorithmEntry
from psro.algorithms.xdo_defaults import default_expansion, default_solver, return_scale
from psro.algorithms.xdo_improving import ImprovingExpansion
from psro.algorithms.xdo_responses import ResponseActions
from psro.context import GameContext
from psro.errors import ConfigError, MetaSolverError
from psro.extensive_form.policies import TabularPolicy
from psro.extensive_form.restricted_cfr import RestrictedCFR
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_lp import LinearProgramError, SequenceFormLP
from psro.oracles.spec import Target, plain_targets
from psro.state import RunState

EQUILIBRIUM = "xdo_restricted_nash"
"""The ``oracle`` metadata of restricted-game equilibrium members."""
NOT_RESPONSES = ("uniform", EQUILIBRIUM)


CFR_VARIANTS = {"cfr": "cfr+", "pcfr": "pcfr+", "dcfr": "dcfr"}
"""The CFR-family restricted-game solvers: ``xdo_solver`` name -> member of
:data:`psro.extensive_form.cfr_variants.VARIANTS`."""
CFR_START = 0.5
"""First CFR-family tolerance on the restricted NashConv, times the largest absolute return."""
CFR_FLOOR = 1e-4
"""Smallest CFR-family tolerance, times the largest absolute return, of a run without a target
exploitability below it (:func:`cfr_floor`)."""


def cfr_floor(scale: float, num_players: int, target: float | None = None) -> float:
    """The smallest CFR-family tolerance on the restricted NashConv: ``CFR_FLOOR * scale``, or
    the NashConv of the run's ``target`` exploitability (``num_players * target``) where that
    is lower, so that a run asked for a tighter equilibrium goes on tightening until it gets
    there (a restricted game no best response extends has the full game's NashConv)."""
    floor = CFR_FLOOR * scale
    return floor if target is None else min(floor, num_players * target)


def cfr_tolerance(metrics: list[dict], scale: float, floor: float) -> float:
    """The CFR-family tolerance for the next restricted game: ``CFR_START * scale``, halved
    whenever the full game's NashConv of an iteration fell below it (as the XDO authors do),
    never below ``floor`` (:func:`cfr_floor`). A function of the metrics and the floor, so a
    resumed run with the same target solves with the same tolerances."""
    tolerance = CFR_START * scale
    for row in metrics:
        while row.get("nash_conv") is not None and row["nash_conv"] < tolerance \
                and tolerance > floor:
            tolerance /= 2
    return max(tolerance, floor)


class XDOAlgorithm(Algorithm):
    """Extensive-form double oracle (see the module docstring)."""

    name = "xdo"

    def __init__(self, tree: SequenceFormGame, zero_sum: bool = True, solver: str | None = None,
                 exact_oracle: bool = True, target_exploitability: float | None = None,
                 expansion: str | None = None):
        self.tree = tree
        self.scale = return_scale(tree)
        """The largest absolute return of the game (:func:`return_scale`), which the
        CFR-family tolerances are relative to."""
        self.responses = ResponseActions(tree, NOT_RESPONSES)
        """The restricted games of best-response members, kept to extend."""
        self.exact_oracle = exact_oracle
        """Whether best responses are exact: only then does a restricted game that no response
        extends hold a full-game equilibrium (an approximate response may just have missed
        the action that would extend it)."""
        self.target = target_exploitability
        """The run's target exploitability (:meth:`aim`), where a CFR-family solver's
        tolerance stops halving if it is below ``CFR_FLOOR`` (:func:`cfr_floor`)."""
        two_player_zero_sum = tree.num_players == 2 and zero_sum
        wanted = expansion or ("improving" if exact_oracle else "responses")
        named_improving = expansion == "improving" and two_player_zero_sum
        self.solver = solver or ("lp" if named_improving else default_solver(
            tree, zero_sum, target_exploitability, improving=wanted == "improving"))
        """The restricted game's solver: ``"lp"`` (exact) or a CFR-family one
        (:data:`CFR_VARIANTS`); without one named, :func:`default_solver`'s (the LP where the
        improving expansion is named: it needs the LP)."""
        if self.solver == "lp" and not two_player_zero_sum:
            raise ConfigError(f"xdo_solver 'lp' needs a two-player zero-sum game; "
                              f"{tree.name!r} has {tree.num_players} players"
                              f"{'' if zero_sum else ' and is not zero-sum'}; use 'cfr'")
        self.expansion = expansion or default_expansion(tree, self.solver, exact_oracle)
        """How the restricted game grows: ``"responses"`` or ``"improving"``."""
        if self.expansion == "improving" and self.solver != "lp":
            raise ConfigError(f"xdo_expansion 'improving' needs xdo_solver 'lp' (its regrets "
                              f"are against an exact restricted equilibrium); got "
                              f"{self.solver!r}: use xdo_solver 'lp' or xdo_expansion "
                              f"'responses'")
        self.improving = ImprovingExpansion(tree, self.allowed, EQUILIBRIUM, NOT_RESPONSES,
                                            self.scale) \
            if self.expansion == "improving" else None  # its cached regrets
        self.lp = SequenceFormLP(tree) if self.solver == "lp" else None
        """The restricted games' LP (``"lp"``)."""
        self.warm = two_player_zero_sum
        """Whether CFR+ continues from the previous restricted game's regrets: in two-player
        zero-sum games, where CFR+ converges (liar's dice: exploitability 1e-3 in 20 s warm);
        elsewhere each new restricted game is solved from scratch (warm regrets carry the
        cycling of a general-sum game: on ``sheriff`` NashConv stayed above 1e-3 for 30 s warm
        and reached it in 8 s from scratch). Either way, the same restricted game asked again
        continues its CFR+ run (:class:`RestrictedCFR`)."""
        self.cfr = RestrictedCFR(tree, warm=self.warm, variant=CFR_VARIANTS[self.solver]) \
            if self.solver in CFR_VARIANTS else None
        """The CFR-family solver's state, carried from one restricted game to the next."""

    def allowed(self, player: int, members: list) -> np.ndarray:
        """Boolean (num_infosets, num_actions): the restricted game's actions of ``player``
        from its best-response members (the lowest legal action where none acts;
        :class:`~psro.algorithms.xdo_responses.ResponseActions`)."""
        return self.responses(player, members)

    def restricted(self, populations: list[list]) -> list[np.ndarray]:
        """Each player's boolean (num_infosets, num_actions) restricted game for the newest best
        responses of ``populations``, grown by the run's ``xdo_expansion``."""
        if self.improving is not None:
            return self.improving.allowed(populations)
        return [self.allowed(p, pop) for p, pop in enumerate(populations)]

    def expand(self, state: RunState) -> list[TabularPolicy]:
        """The restricted game's equilibrium, one new member per player (none at iteration 0:
        the first best responses answer the uniform policy, as the XDO authors start)."""
        if state.iteration < 1:
            return []
        n = self.tree.num_players
        allowed = self.restricted(state.populations)
        extra: dict = {}
        if self.solver == "lp":
            policies = self._equilibrium(allowed)
        else:
            tolerance = cfr_tolerance(state.metrics, self.scale, self.floor)
            solution = self.cfr.solve(allowed, tolerance)
            policies = solution.policies
            extra = {"cfr_tolerance": tolerance, "cfr_iterations": solution.iterations,
                     "restricted_nash_conv": solution.nash_conv, "cfr_warm": self.warm,
                     "cfr_continued": solution.continued}
        return [TabularPolicy(p, policies[p], name=f"xdo_nash_p{p}_it{state.iteration}",
                              metadata={"iteration": state.iteration, "oracle": EQUILIBRIUM,
                                        **extra})
                for p in range(n)]

    def restore(self, state: RunState) -> None:
        """On a resumed run, rebuild CFR+'s state by replaying the earlier restricted games
        for the iterations they ran (bit for bit what the uninterrupted run holds): warm, all
        of them; from scratch, those since the last call that did not continue its
        predecessor (a run written before calls continued: the last one)."""
        if self.solver not in CFR_VARIANTS:
            return
        solved = [m for m in state.populations[0] if m.metadata.get("oracle") == EQUILIBRIUM]
        self.warm = self.warm and all(m.metadata.get("cfr_warm") for m in solved)
        self.cfr = RestrictedCFR(self.tree, warm=self.warm, variant=CFR_VARIANTS[self.solver])
        if not self.warm:
            fresh = [i for i, m in enumerate(solved) if not m.metadata.get("cfr_continued")]
            solved = solved[fresh[-1]:] if fresh else []
        for member in solved:
            k = member.metadata["iteration"]
            allowed = [self.allowed(p, [m for m in pop if m.metadata.get("iteration", 0) <= k])
                       for p, pop in enumerate(state.populations)]
            self.cfr.replay(allowed, int(member.metadata["cfr_iterations"]))

    def columns(self, num_players: int) -> tuple[str, ...]:
        """The key of :meth:`metrics`."""
        return ("restricted_actions",)

    def metrics(self, state: RunState) -> dict:
        """``restricted_actions``: the (information set, action) pairs the restricted game
        allows, summed over the players (the full game's count once it is complete)."""
        return {"restricted_actions": int(sum(a.sum()
                                              for a in self.restricted(state.populations)))}

    def _at_floor(self, state: RunState) -> bool:
        """Whether the newest restricted equilibrium's NashConv in the full game (the newest
        row's, measured exactly) is at or below the floor tolerance. The next tolerance being
        the floor is not enough: the newest solve may have been looser, or have ended at its
        iteration cap above its tolerance, and the best responses that added no action
        answered the previous equilibrium, not the newest."""
        nash_conv = state.metrics[-1].get("nash_conv")
        return nash_conv is not None and nash_conv <= self.floor

    def aim(self, target_exploitability: float | None) -> None:
        """The target exploitability of the run's next iterations (each ``run()`` call's)."""
        self.target = target_exploitability

    @property
    def floor(self) -> float:
        """The CFR-family solver's smallest tolerance for this run (:func:`cfr_floor`)."""
        return cfr_floor(self.scale, self.tree.num_players, self.target)

    def _equilibrium(self, allowed: list[np.ndarray]) -> list[np.ndarray]:
        """Both players' restricted equilibrium from one LP
        (:class:`~psro.extensive_form.sequence_lp.SequenceFormLP`)."""
        try:
            return self.lp.solve(allowed)[0]
        except LinearProgramError as err:
            raise MetaSolverError(f"xdo: the restricted-game LP failed ({err}); the previous "
                                  f"iteration is kept") from None

    def meta(self, state: RunState) -> list[np.ndarray]:
        """All the weight on each player's newest member, the restricted equilibrium."""
        out = []
        for pop in state.populations:
            weights = np.zeros(len(pop))
            weights[-1] = 1.0
            out.append(weights)
        return out

    def targets(self, state: RunState) -> list[Target]:
        """One best response per player against the restricted equilibrium."""
        return plain_targets(state.mixtures)

    def chosen_settings(self) -> dict:
        """Settings whose default this algorithm chose for the run (:func:`default_solver`,
        :func:`default_expansion`), so that the run records what ran."""
        return {"xdo_solver": self.solver, "xdo_expansion": self.expansion}

    def stop(self, state: RunState) -> str | None:
        """Once the newest best responses add no action (with a CFR-family solver, only once
        the newest row's NashConv is at or below the floor tolerance), or (improving actions,
        exact responses) once the exploitability is 0 (:meth:`ImprovingExpansion.solved`):
        ``restricted_game_complete`` with exact responses (the restricted equilibrium is the
        full game's), ``no_new_actions`` with trained ones, which may have missed the action
        that would extend it: not convergence."""
        if state.iteration < 1:
            return None
        if self.exact_oracle and self.improving and self.improving.solved(state.metrics):
            return "restricted_game_complete"
        if self.solver in CFR_VARIANTS and not self._at_floor(state):
            return None
        older = [[m for m in pop if m.metadata.get("iteration", 0) < state.iteration]
                 for pop in state.populations]
        for before, now in zip(self.restricted(older), self.restricted(state.populations),
                               strict=True):
            if not np.array_equal(before, now):
                return None
        return "restricted_game_complete" if self.exact_oracle else "no_new_actions"


def _xdo(context: GameContext, meta_solver) -> XDOAlgorithm:
    """The registry's factory: the walked tree is its restricted game."""
    exact = "exact" in oracles.get(context.config.oracle).capabilities
    return XDOAlgorithm(context.require_tree(NEEDS_TREE), zero_sum=context.game.zero_sum,
                        solver=context.config.xdo_solver, exact_oracle=exact,
                        target_exploitability=context.config.target_exploitability,
                        expansion=context.config.xdo_expansion)


NEEDS_TREE = "algorithm 'xdo' (its restricted game is the walked tree)"
ENTRY = AlgorithmEntry(_xdo, meta_solver=None, default_meta_solver=None,
                       why="it puts all the meta-weight on its restricted game's equilibrium",
                       settings=("xdo_solver", "xdo_expansion"),
                       needs_tree=lambda config: NEEDS_TREE)
