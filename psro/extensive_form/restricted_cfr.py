"""A CFR-family solver (CFR+ unless told otherwise) on a restricted game of the walked
sequence form: XDO's restricted-game solver (``xdo_solver`` ``"cfr"``, ``"pcfr"``, ``"dcfr"``;
the only kind for n-player and general-sum games), and, on the whole game, the tabular solvers
of :mod:`psro.extensive_form.tabular_cfr`.

The restricted game is the full tree in which player p may take only ``allowed[p][i, a]``
actions at its information set i. Every iteration updates every player in turn (alternating
updates, as CFR+ is usually run) by its variant's rule (:mod:`psro.extensive_form.cfr_variants`)
on counterfactual values, computed by one backward pass over the player's information sets
(:func:`~psro.extensive_form.sequence_passes.values`: deepest first, as
:meth:`SequenceFormGame.best_response` does, with the expectation under the current policy in
place of the maximum; regrets, iterates and plans are arrays with one entry per sequence,
:mod:`psro.extensive_form.sequence_passes`); the output is each player's *average* policy
(iteration ``t`` weighted by ``t ** gamma``: linearly for CFR+).

Two engines compute these iterations. Two-player games run compiled
(:mod:`psro.extensive_form.compiled_cfr`) on the part of the tree both restricted players reach
(:func:`~psro.extensive_form.compact.restrict`): on the whole game 3-10 times faster an
iteration than the numpy passes (CFR+: 3.2-6.2), summed over an ``xdo`` run's restricted games
4-9 times (``experiments/bench_cfr_engines.py``). Games of more players run the numpy passes,
over the leaves the other players reach. Both give the same iterates to rounding; warm-started,
the numpy passes also update regrets below a player's disallowed actions, where a later, larger
restricted game starts from them; the compiled run leaves those as they were.

What it converges to: in two-player zero-sum games the average profile converges to a Nash
equilibrium of the restricted game (NashConv ``O(1/sqrt(T))`` at worst); in n-player or
general-sum games CFR is only a no-regret method: the players' time-averaged *joint* play
approaches a coarse correlated equilibrium of the restricted game, and the profile of average
policies it returns carries no equilibrium guarantee (its NashConv is what XDO measures and
reports, in the full game).

Stopping rule: whenever the average counts a multiple of ``CHECK_EVERY`` iterations (and,
in a warm-started call, also at ``EARLY_CHECKS``) the average profile's NashConv *in the
restricted game* (best responses limited to the allowed actions) is measured, and the solver
stops once it is at or below ``tolerance`` or after ``max_iterations``. :class:`RestrictedCFR`
keeps the regrets from one restricted game to the next (warm start, or from scratch with
``warm=False``) and, when a call's restricted game is the previous call's, continues that
call's run (its regrets, average and iteration count) instead of beginning again;
:func:`solve_restricted` starts from scratch.
"""

from typing import NamedTuple

import numpy as np

from psro.extensive_form import sequence_passes as passes
from psro.extensive_form.cfr_variants import CFRVariant, variant_named
from psro.extensive_form.compact import (
    CompactGame,
    by_compact_sequence,
    compact_game,
    restrict,
    restriction_buffers,
)
from psro.extensive_form.compiled_cfr import CompiledRun
from psro.extensive_form.reached import allowed_sequences, others_reach
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_passes import SequencePlayer

CHECK_EVERY = 25
"""Iterations between two measurements of the restricted NashConv."""

EARLY_CHECKS = (1, 2, 4, 8, 16)
"""Iterations of a warm-started call at which the restricted NashConv is also measured, before
the first multiple of ``CHECK_EVERY``: a warm start is often within the tolerance after a
few iterations (liar's dice: exploitability 1e-3 in 12 s with them, 20 s without). Calls from
scratch measure every ``CHECK_EVERY`` only (early answers of a cold start are poor targets for
the next best responses: with early checks, XDO on ``sheriff`` stayed above NashConv 0.1)."""


class RestrictedSolution(NamedTuple):
    """Average policies (one (num_infosets, num_actions) array per player), the restricted
    game's NashConv of that profile, the iterations this call ran, and whether the call
    continued the previous call's run (the same restricted game)."""

    policies: list[np.ndarray]
    nash_conv: float
    iterations: int
    continued: bool = False


def restricted_nash_conv(tree: SequenceFormGame, policies: list[np.ndarray],
                         allowed: list[np.ndarray],
                         prepared: list[SequencePlayer] | None = None) -> float:
    """Sum over players of what a best response limited to the allowed actions gains
    against the others' ``policies`` in the restricted game (``prepared``: the restricted
    game's indices where the caller has them, as :meth:`RestrictedCFR.solve` does)."""
    if prepared is None:
        prepared = [passes.sequence_player(tree, p, a) for p, a in enumerate(allowed)]
    plans = [tree.realization_plan(p, pi) for p, pi in enumerate(policies)]
    values = tree.expected_returns(plans)
    total = 0.0
    for p, indexed in enumerate(prepared):
        _, _, best = passes.values(indexed, passes.leaf_values(indexed, p, plans))
        total += max(best - float(values[p]), 0.0)
    return total


class RestrictedCFR:
    """A CFR-family solver (``variant``: CFR+ unless told otherwise) on a restricted game that
    may grow between calls.

    On a new restricted game, what carries over with ``warm=True`` is each player's regrets
    (one per sequence), so the first iterate on the new game is the previous game's
    last *current* policy: actions newly allowed start with zero regret, the others keep
    theirs. The average (the linearly weighted sum of the iterates' realization plans, and the
    iteration count ``t`` that weights it) restarts: an average that kept the earlier, smaller
    games' iterates would be dominated by them (on liar's dice, keeping it made reaching a
    restricted NashConv of 0.008 take 2425 iterations; restarting it, 150). With
    ``warm=False`` a new restricted game starts from zero regrets, as :func:`solve_restricted`
    does.

    On the *same* restricted game as the previous call (XDO asks again with a tighter
    tolerance when no best response added an action), the call continues the previous call's
    run: regrets, average and ``t`` are kept, so ``k`` iterations more give the average of one
    run of ``t + k`` iterations. From scratch (``warm=False``), that is bit for bit what
    a new run of ``t + k`` iterations gives, without running the first ``t`` again
    (three-player Kuhn poker: 150 CFR+ iterations instead of 225 for the same policies).

    Deterministic: the same sequence of calls (restricted games and iteration counts) gives the
    same state bit for bit, so a resumed run rebuilds it with :meth:`replay`.
    """

    def __init__(self, tree: SequenceFormGame, warm: bool = True,
                 variant: str | CFRVariant = "cfr+", compiled: bool | None = None):
        self.tree = tree
        self.warm = warm
        """Whether a new restricted game keeps the regrets of the previous one."""
        self.variant = variant_named(variant)
        """The CFR-family member run (a name of
        :data:`~psro.extensive_form.cfr_variants.VARIANTS` or a ``CFRVariant``)."""
        self.t = 0
        self.total = 0
        """Iterations run over every call (with ``warm``, a new game after the first starts
        from warm regrets)."""
        self.regrets = [np.zeros(tree.players[p].num_sequences)
                        for p in range(tree.num_players)]
        """Each player's accumulated regrets by sequence (num_sequences,; entry 0 unused);
        compiled, those on the current restricted game's part as of its last average."""
        self.plan_sums = [np.zeros(tree.players[p].num_sequences)
                          for p in range(tree.num_players)]
        self._game: list[np.ndarray] | None = None
        """The previous call's restricted game (None before the first call)."""
        self._probs: list[np.ndarray] | None = None
        """The previous call's last iterate (by sequence), where a call on the same game
        continues."""
        self._plans: list[np.ndarray] | None = None
        """The realization plans of that iterate (None until an iteration computed them)."""
        self._prepared: list[SequencePlayer] = []
        """The current restricted game's indices, one per player."""
        if compiled and tree.num_players != 2:
            raise ValueError(f"the compiled engine runs two-player games; {tree.name!r} has "
                             f"{tree.num_players} players")
        self.compiled = tree.num_players == 2 if compiled is None else compiled
        """Whether the run is compiled on each restricted game's compact part
        (:class:`~psro.extensive_form.compiled_cfr.CompiledRun`), as two-player games are
        unless told otherwise; else the numpy passes, as games of more players are."""
        self._run: CompiledRun | None = None
        """The compiled run of the current restricted game."""
        self._whole: CompactGame | None = None
        """The whole game's compact arrays, each restricted game's cut out of them (compiled)."""
        self._buffers: tuple[np.ndarray, ...] = ()
        """Where each restricted game's leaf arrays are written (:meth:`_compact`)."""

    def _iterate(self) -> None:
        """One iteration with alternating updates (later players answer the earlier ones'
        update) on the current restricted game; updates the current iterate in place."""
        n, variant, probs = self.tree.num_players, self.variant, self._probs
        self.t += 1
        self.total += 1
        plans = self._plans or [passes.plan(self._prepared[p], probs[p]) for p in range(n)]
        for p, prepared in enumerate(self._prepared):
            leaf_value = passes.leaf_values(prepared, p, plans)
            value, node, _ = passes.values(prepared, leaf_value, probs[p])
            self.regrets[p] = variant.accumulate(
                self.regrets[p], passes.instantaneous_regrets(prepared, value, node), self.t)
            self.plan_sums[p] += variant.average_weight(self.t) * plans[p]
            if variant.predictive:
                probs[p] = passes.predicted_policy(prepared, self.regrets[p], probs[p],
                                                   leaf_value)
            else:
                probs[p] = passes.regret_matching(prepared, self.regrets[p])
            plans[p] = passes.plan(prepared, probs[p])
        self._plans = plans  # the next iteration's plans: ``probs`` changes only here

    def average(self, allowed: list[np.ndarray]) -> list[np.ndarray]:
        """Each player's average policy (uniform over the ``allowed`` actions where it does
        not reach)."""
        sums = self.plan_sums if self._run is None else self._compiled_sums(allowed)
        return [passes.behaviour(self.tree, p, sums[p], allowed[p])
                for p in range(self.tree.num_players)]

    def _compiled_sums(self, allowed: list[np.ndarray]) -> list[np.ndarray]:
        """The compiled run's average as realization plans on the whole tree: off its compact
        part, where the numpy passes' iterates are regret matching on regrets no iteration of
        this call changes, that policy."""
        self._run.save_regrets(self.regrets)
        out = []
        for p, (average, player) in enumerate(zip(self._run.average_probs(),
                                                  self._run.game.players, strict=True)):
            by_sequence = passes.allowed_by_sequence(self.tree, p, allowed[p])
            probs = passes.matched(self.regrets[p], *by_sequence,
                                   self.tree.players[p].num_infosets)
            probs[player.sequences] = average
            out.append(self.tree.realization_plan(p, passes.policy_array(self.tree, p, probs)))
        return out

    def current_by_sequence(self) -> list[np.ndarray]:
        """Each player's current iterate by sequence (compiled: 0 off the restricted game's
        compact part)."""
        if self._run is None:
            return [probs.copy() for probs in self._probs]
        return [self._run.on_tree(p, probs) for p, probs in enumerate(self._run.probs)]

    def _advance(self, iterations: int) -> None:
        if self._run is not None:
            self._run.run(iterations)
            self.t = self._run.t
            self.total += iterations
            return
        for _ in range(iterations):
            self._iterate()

    def _nash_conv(self, allowed: list[np.ndarray]) -> float:
        if self._run is not None:
            return self._run.nash_conv()
        return restricted_nash_conv(self.tree, self.average(allowed), allowed, self._prepared)

    def _next_check(self, done: int, max_iterations: int, early: bool) -> int:
        """Iterations until the next measurement of :meth:`solve`'s call (``done`` run)."""
        step = CHECK_EVERY - self.t % CHECK_EVERY
        if early:
            step = min([step] + [e - done for e in EARLY_CHECKS if e > done])
        return min(step, max_iterations - done)

    def solve(self, allowed: list[np.ndarray], tolerance: float,
              max_iterations: int = 5000) -> RestrictedSolution:
        """Continue the run on the restricted game ``allowed`` until the average profile's
        restricted NashConv (measured whenever the average counts a multiple of
        ``CHECK_EVERY`` iterations, and at ``EARLY_CHECKS`` of a call that starts a new
        average on warm regrets) is at or below ``tolerance``, or ``max_iterations`` more
        iterations ran. The solution's ``iterations`` counts this call's iterations."""
        continued = self.continues(allowed)
        early = self.warm and self.total > 0 and not continued
        self._start(allowed)
        nash_conv, done = np.inf, 0
        while done < max_iterations:
            step = self._next_check(done, max_iterations, early)
            self._advance(step)
            done += step
            nash_conv = self._nash_conv(allowed)
            if nash_conv <= tolerance:
                break
        return RestrictedSolution(self.average(allowed), nash_conv, done, continued)

    def replay(self, allowed: list[np.ndarray], iterations: int) -> None:
        """Run exactly ``iterations`` iterations on ``allowed`` without measuring: what
        :meth:`solve` did when it ran that many (a resumed run's rebuild)."""
        self._start(allowed)
        self._advance(iterations)

    def continues(self, allowed: list[np.ndarray]) -> bool:
        """Whether a call on ``allowed`` continues the previous call (the same restricted game)."""
        return self._game is not None and all(
            np.array_equal(a, b) for a, b in zip(allowed, self._game, strict=True))

    def _compact(self, allowed: list[np.ndarray]) -> CompactGame:
        """The compact part of the two-player restricted game ``allowed``: the whole game's, or
        cut out of it by :func:`~psro.extensive_form.compact.restrict` (what
        :func:`~psro.extensive_form.compact.compact_game` of ``allowed`` gives, by one compiled
        pass), into buffers that the next restricted game's overwrites."""
        if self._whole is None:
            self._whole = compact_game(self.tree, [self.tree.uniform_policy(p) > 0
                                                   for p in range(2)])
        kept = by_compact_sequence(self.tree, self._whole, allowed)
        if all(k.all() for k in kept):
            return self._whole
        self._buffers = self._buffers or restriction_buffers(self._whole)
        return restrict(self._whole, kept, self._buffers)

    def _start(self, allowed: list[np.ndarray]) -> None:
        """Begin a call on ``allowed``: on the previous call's game, its last iterate (nothing
        restarts); else regrets of actions it does not allow are zeroed (all of them with
        ``warm=False``), the average restarts, and the first iterate is regret matching on the
        kept regrets."""
        if self.continues(allowed):
            return
        if self._run is not None:
            self._run.save_regrets(self.regrets)
        self.regrets = [np.where(passes.allowed_by_sequence(self.tree, p, a)[1], r, 0.0)
                        if self.warm else np.zeros_like(r)
                        for p, (r, a) in enumerate(zip(self.regrets, allowed, strict=True))]
        self.t = 0
        self._game = [np.array(a, copy=True) for a in allowed]
        if self.compiled:
            self._run = CompiledRun(self.tree, self._compact(allowed), self.regrets,
                                    self.variant)
            return
        fits = allowed_sequences(self.tree, allowed)
        leaves = others_reach(self.tree, allowed, fits)
        self._prepared = [passes.sequence_player(self.tree, p, a, leaves[p], fits[p])
                          for p, a in enumerate(allowed)]
        self.plan_sums = [np.zeros_like(plan) for plan in self.plan_sums]
        self._probs = [passes.regret_matching(prepared, r)
                       for prepared, r in zip(self._prepared, self.regrets, strict=True)]
        self._plans = None


def solve_restricted(tree: SequenceFormGame, allowed: list[np.ndarray], tolerance: float,
                     max_iterations: int = 5000,
                     variant: str | CFRVariant = "cfr+") -> RestrictedSolution:
    """Average policies of the restricted game by ``variant`` (CFR+ unless told otherwise)
    from scratch (see the module docstring); stops at a restricted NashConv at or below
    ``tolerance`` or after ``max_iterations``."""
    return RestrictedCFR(tree, warm=False, variant=variant).solve(allowed, tolerance,
                                                                 max_iterations)


__all__ = ["CHECK_EVERY", "EARLY_CHECKS", "RestrictedCFR", "RestrictedSolution",
           "restricted_nash_conv", "solve_restricted"]
