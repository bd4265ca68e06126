"""CFR+ on a restricted game of the walked sequence form: XDO's restricted-game solver
(``xdo_solver = "cfr"``; the only one for n-player and general-sum games).

The restricted game is the full tree in which player p may take only ``allowed[p][i, a]``
actions at its information set i. Every iteration updates every player in turn (alternating
updates, as CFR+ is usually run) by regret matching+ on counterfactual values, computed by
one backward pass over the player's information sets (deepest first, as
:meth:`SequenceFormGame.best_response` does, with the expectation under the current policy in
place of the maximum); the output is each player's *average* policy, weighted linearly in the
iteration (CFR+).

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
call's CFR+ run (its regrets, average and iteration count) instead of beginning again;
:func:`solve_restricted` starts from scratch.
"""

from typing import NamedTuple

import numpy as np

from psro.extensive_form.sequence_form import SequenceFormGame

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
    game's NashConv of that profile, the CFR+ iterations this call ran, and whether the call
    continued the previous call's run (the same restricted game)."""

    policies: list[np.ndarray]
    nash_conv: float
    iterations: int
    continued: bool = False


def regret_matching(regrets: np.ndarray, allowed: np.ndarray,
             uniform: np.ndarray | None = None) -> np.ndarray:
    """Regret matching+: positive regrets normalised; uniform over the allowed actions where
    none is positive (``uniform``: that policy, where the caller has it already)."""
    positive = np.where(allowed, np.maximum(regrets, 0.0), 0.0)
    total = positive.sum(axis=1, keepdims=True)
    if uniform is None:
        uniform = allowed / allowed.sum(axis=1, keepdims=True)
    return np.where(total > 0, positive / np.where(total > 0, total, 1.0), uniform)


class PreparedPlayer(NamedTuple):
    """One player's restricted game, indexed once a call: what every iteration's backward
    pass and realization plan would otherwise look up again. ``levels``: per group of
    information sets (deepest first, as :func:`counterfactual_values` walks them), the
    information sets, the sequence each action leads to (0 where illegal), the legal and
    allowed actions and the sequences the information sets hang from; ``returns``: the
    player's return at each leaf times chance's reach; ``plan_levels``: per depth, the
    sequences, their parents and their (information set, action) as a flat index of the
    policy array."""

    allowed: np.ndarray
    uniform: np.ndarray
    returns: np.ndarray
    num_sequences: int
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    plan_levels: list[tuple[np.ndarray, np.ndarray, np.ndarray]]


def prepare_player(tree: SequenceFormGame, player: int, allowed: np.ndarray) -> PreparedPlayer:
    info = tree.players[player]
    seq_table, groups = tree._response_order(player)
    levels = []
    for infosets in groups:
        seqs = seq_table[infosets]
        levels.append((infosets, np.maximum(seqs, 0), (seqs >= 0) & allowed[infosets],
                       info.parent_seq[infosets]))
    plan_levels = [(level, info.seq_parent[level],
                    info.seq_infoset[level] * tree.num_actions + info.seq_action[level])
                   for level in tree._depth_levels[player]]
    return PreparedPlayer(allowed, allowed / allowed.sum(axis=1, keepdims=True),
                     tree.leaf_chance * tree.leaf_returns[player], info.num_sequences, levels,
                     plan_levels)


def plan_of(prepared: PreparedPlayer, probs: np.ndarray) -> np.ndarray:
    """:meth:`SequenceFormGame.realization_plan` on prepared indices (the same numbers)."""
    plan = np.ones(prepared.num_sequences)
    flat = probs.ravel()
    for level, parents, actions in prepared.plan_levels:
        plan[level] = plan[parents] * flat[actions]
    return plan


def leaf_weights(tree: SequenceFormGame, player: int, plans: list[np.ndarray],
                  returns: np.ndarray) -> np.ndarray:
    """What each leaf weighs for ``player``: ``returns`` (its return times chance's reach)
    times the other players' reach under ``plans``."""
    weight = returns
    for q, plan in enumerate(plans):
        if q != player:
            weight = weight * plan[tree.leaf_seqs[q]]
    return weight


def counterfactual_values(tree: SequenceFormGame, player: int, prepared: PreparedPlayer,
                          weight: np.ndarray, probs: np.ndarray | None = None
                          ) -> tuple[np.ndarray, np.ndarray, float]:
    """One backward pass over ``player``'s information sets (deepest first, as
    :meth:`SequenceFormGame.best_response` does) given leaf weights: the counterfactual
    values (num_infosets, num_actions), -inf where not allowed; each information set's value
    (num_infosets,), expected under ``probs`` or, without them, of a restricted best
    response; and the root's value."""
    info = tree.players[player]
    value = np.bincount(tree.leaf_seqs[player], weights=weight, minlength=info.num_sequences)
    cf = np.full((info.num_infosets, tree.num_actions), -np.inf)
    node = np.zeros(info.num_infosets)
    for infosets, seqs, ok, parents in prepared.levels:
        values = np.where(ok, value[seqs], -np.inf)
        cf[infosets] = values
        if probs is None:
            here = values.max(axis=1)
        else:
            here = np.sum(np.where(ok, values, 0.0) * probs[infosets], axis=1)
        node[infosets] = here
        np.add.at(value, parents, here)
    return cf, node, float(value[0])


def restricted_nash_conv(tree: SequenceFormGame, policies: list[np.ndarray],
                         allowed: list[np.ndarray],
                         prepared: list[PreparedPlayer] | None = None) -> float:
    """Sum over players of what a best response limited to the allowed actions gains
    against the others' ``policies`` in the restricted game (``prepared``: the restricted
    game's indices where the caller has them, as :meth:`RestrictedCFR.solve` does)."""
    if prepared is None:
        prepared = [prepare_player(tree, p, a) for p, a in enumerate(allowed)]
    plans = [tree.realization_plan(p, pi) for p, pi in enumerate(policies)]
    values = tree.expected_returns(plans)
    total = 0.0
    for p, indexed in enumerate(prepared):
        weight = leaf_weights(tree, p, plans, indexed.returns)
        _, _, best = counterfactual_values(tree, p, indexed, weight)
        total += max(best - float(values[p]), 0.0)
    return total


class RestrictedCFR:
    """CFR+ on a restricted game that may grow between calls.

    On a new restricted game, what carries over with ``warm=True`` is each player's regrets
    (num_infosets, num_actions), so the first iterate on the new game is the previous game's
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
    CFR+ run of ``t + k`` iterations. From scratch (``warm=False``), that is bit for bit what
    a new run of ``t + k`` iterations gives, without running the first ``t`` again
    (three-player Kuhn poker: 150 CFR+ iterations instead of 225 for the same policies).

    Deterministic: the same sequence of calls (restricted games and iteration counts) gives the
    same state bit for bit, so a resumed run rebuilds it with :meth:`replay`.
    """

    def __init__(self, tree: SequenceFormGame, warm: bool = True):
        self.tree = tree
        self.warm = warm
        """Whether a new restricted game keeps the regrets of the previous one."""
        self.t = 0
        self.total = 0
        """Iterations run over every call (with ``warm``, a new game after the first starts
        from warm regrets)."""
        self.regrets = [np.zeros((tree.players[p].num_infosets, tree.num_actions))
                        for p in range(tree.num_players)]
        self.plan_sums = [np.zeros(tree.players[p].num_sequences)
                          for p in range(tree.num_players)]
        self._game: list[np.ndarray] | None = None
        """The previous call's restricted game (None before the first call)."""
        self._probs: list[np.ndarray] | None = None
        """The previous call's last iterate, where a call on the same game continues."""
        self._plans: list[np.ndarray] | None = None
        """The realization plans of that iterate (None until an iteration computed them)."""

    def _iterate(self, prepared: list[PreparedPlayer], probs: list[np.ndarray]) -> None:
        """One CFR+ iteration with alternating updates (later players answer the earlier
        ones' update); updates ``probs`` in place."""
        tree, n = self.tree, self.tree.num_players
        self.t += 1
        self.total += 1
        plans = self._plans or [plan_of(prepared[p], probs[p]) for p in range(n)]
        for p in range(n):
            allowed = prepared[p].allowed
            cf, node, _ = counterfactual_values(tree, p, prepared[p],
                                  leaf_weights(tree, p, plans, prepared[p].returns), probs[p])
            self.regrets[p] = np.maximum(
                self.regrets[p] + np.where(allowed, cf - node[:, None], 0.0), 0.0)
            self.plan_sums[p] += self.t * plans[p]
            probs[p] = regret_matching(self.regrets[p], allowed, prepared[p].uniform)
            plans[p] = plan_of(prepared[p], probs[p])
        self._plans = plans  # the next iteration's plans: ``probs`` changes only here

    def average(self, allowed: list[np.ndarray]) -> list[np.ndarray]:
        """Each player's average policy (uniform over the allowed actions where it does not
        reach)."""
        return [behaviour(self.tree, p, self.plan_sums[p], allowed[p])
                for p in range(self.tree.num_players)]

    def solve(self, allowed: list[np.ndarray], tolerance: float,
              max_iterations: int = 5000) -> RestrictedSolution:
        """Continue CFR+ on the restricted game ``allowed`` until the average profile's
        restricted NashConv (measured whenever the average counts a multiple of
        ``CHECK_EVERY`` iterations, and at ``EARLY_CHECKS`` of a call that starts a new
        average on warm regrets) is at or below ``tolerance``, or ``max_iterations`` more
        iterations ran. The solution's ``iterations`` counts this call's iterations."""
        continued = self.continues(allowed)
        early = self.warm and self.total > 0 and not continued
        probs = self._start(allowed)
        prepared = [prepare_player(self.tree, p, a) for p, a in enumerate(allowed)]
        average, nash_conv, done = self.average(allowed), np.inf, 0
        while done < max_iterations:
            self._iterate(prepared, probs)
            done += 1
            if self.t % CHECK_EVERY == 0 or done == max_iterations or \
                    (early and done in EARLY_CHECKS):
                average = self.average(allowed)
                nash_conv = restricted_nash_conv(self.tree, average, allowed, prepared)
                if nash_conv <= tolerance:
                    break
        return RestrictedSolution(average, nash_conv, done, continued)

    def replay(self, allowed: list[np.ndarray], iterations: int) -> None:
        """Run exactly ``iterations`` iterations on ``allowed`` without measuring: what
        :meth:`solve` did when it ran that many (a resumed run's rebuild)."""
        probs = self._start(allowed)
        prepared = [prepare_player(self.tree, p, a) for p, a in enumerate(allowed)]
        for _ in range(iterations):
            self._iterate(prepared, probs)

    def continues(self, allowed: list[np.ndarray]) -> bool:
        """Whether a call on ``allowed`` continues the previous call (the same restricted
        game)."""
        return self._game is not None and all(
            np.array_equal(a, b) for a, b in zip(allowed, self._game, strict=True))

    def _start(self, allowed: list[np.ndarray]) -> list[np.ndarray]:
        """Begin a call on ``allowed``: on the previous call's game, its last iterate (nothing
        restarts); else regrets of actions it does not allow are zeroed (all of them with
        ``warm=False``), the average restarts, and the first iterate is regret matching on the
        kept regrets. The iterate returned is updated in place by the call."""
        if self.continues(allowed):
            return self._probs
        self.regrets = [np.where(ok, r, 0.0) if self.warm else np.zeros_like(r)
                        for r, ok in zip(self.regrets, allowed, strict=True)]
        self.t = 0
        self.plan_sums = [np.zeros_like(plan) for plan in self.plan_sums]
        self._game = [np.array(a, copy=True) for a in allowed]
        self._probs = [regret_matching(r, a) for r, a in zip(self.regrets, allowed, strict=True)]
        self._plans = None
        return self._probs


def solve_restricted(tree: SequenceFormGame, allowed: list[np.ndarray], tolerance: float,
                     max_iterations: int = 5000) -> RestrictedSolution:
    """CFR+ average policies of the restricted game from scratch (see the module docstring);
    stops at a restricted NashConv at or below ``tolerance`` or after ``max_iterations``."""
    return RestrictedCFR(tree, warm=False).solve(allowed, tolerance, max_iterations)


def behaviour(tree: SequenceFormGame, player: int, plan: np.ndarray,
              allowed: np.ndarray) -> np.ndarray:
    """Action probabilities (num_infosets, num_actions) of a realization plan (or any
    positive multiple of one); uniform over the allowed actions where the plan does not
    reach (its reach or its actions' mass at most 1e-12 of the root's)."""
    info = tree.players[player]
    seq_table, _ = tree._response_order(player)
    reach = plan[info.parent_seq][:, None]
    mass = np.where(seq_table >= 0, plan[np.maximum(seq_table, 0)], 0.0)
    total = mass.sum(axis=1, keepdims=True)
    uniform = allowed / allowed.sum(axis=1, keepdims=True)
    floor = 1e-12 * max(float(plan[0]), 1e-300)
    ok = (reach > floor) & (total > floor)
    return np.where(ok, mass / np.where(total > 0, total, 1.0), uniform)


__all__ = ["CHECK_EVERY", "EARLY_CHECKS", "RestrictedCFR", "RestrictedSolution", "behaviour",
           "restricted_nash_conv", "solve_restricted"]
