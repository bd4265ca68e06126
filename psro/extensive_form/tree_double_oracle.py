"""XDO's double oracle on a walked two-player zero-sum game, as a whole-game solver (``psro
solve-tree GAME --solver xdo``): no population, payoff table or run directory, its passes over
the tree compiled (:mod:`psro.extensive_form.double_oracle_kernel`).

The restricted game allows, at each information set, some of the legal actions. It starts with
each player's best response to the uniform policy (one action at every information set, as
``xdo``'s first best responses); then each iteration

1. solves the restricted game exactly by its sequence-form LP (HiGHS's simplex, on the part of
   the game both restricted players reach:
   :class:`~psro.extensive_form.sequence_lp.SequenceFormLP`);
2. computes each player's best-response gain against that restricted equilibrium over the whole
   game (its exploitability, OpenSpiel's NashConv over 2) and, in the same pass, the
   *improving actions*: at each information set where some action's counterfactual regret
   exceeds ``EXACT`` times the largest absolute return, the actions of largest regret, regrets
   taken against the equilibrium completed by best play within the restricted game where its
   own plan does not reach (:mod:`psro.extensive_form.improving`, whose numbers these are);
3. adds them (where there is none, each player's best-response actions, as ``xdo``'s fallback).

It stops when the restricted equilibrium's NashConv is at most ``EXACT`` times the largest
return, or when nothing is added: either way the last restricted equilibrium is an equilibrium
of the whole game, to the LP's tolerance. (Improving actions can remain at an exact
equilibrium, at information sets its own plan does not reach; growing on would only change
which equilibrium the next LPs return.) This is ``psro run --algorithm xdo --xdo-solver lp
--xdo-expansion improving``'s sequence of restricted games but for the start (``xdo`` adds the
lowest legal actions to its first best responses'), without its per-iteration costs:
building policies and payoff entries for a population, and writing each iteration.

With a CFR-family ``variant`` (``psro solve-tree --solver xdo_cfr``: CFR+; ``xdo_pcfr``: PCFR+;
``xdo_dcfr+``: CFR+, then DCFR+ once the restricted game settles), step 1 is instead a
warm-started solve on the restricted game's compact part
(:class:`~psro.extensive_form.restricted_solves.RestrictedSolves`: regrets carried over from the
last restricted game, the average restarted until it settles) until the restricted NashConv is
at most ``CFR_SHARE`` of the last NashConv in the whole game; the improving actions are taken
against that approximate equilibrium, and where there are none no best response is added (the
next solve is tighter instead). It is an anytime method: each iteration's average profile is
measured, and it only stops at NashConv ``EXACT`` (or at its caller's thresholds). Given a
target exploitability (``step(stop_below=...)``; ``psro solve-tree`` passes the next threshold
to cross), a restricted solve also measures its average in the whole game at each of its checks
whose restricted NashConv is at most twice the target (the restricted NashConv is at most the
whole game's: a best response limited to the allowed actions gains no more than one that is not,
so no earlier check could find the target met), and the step ends at the first measurement at or
below the target; the next step resumes that solve, so the restricted games grow as they would
without a target. A pass over the whole game costs about one CFR iteration of the whole game.
"""

from __future__ import annotations

import time

import numpy as np

from psro.extensive_form.cfr_variants import variant_named
from psro.extensive_form.compact import compact_game
from psro.extensive_form.double_oracle_kernel import (
    best_actions,
    completed_plan,
    improving_actions,
    live_part,
    uniform_plan,
)
from psro.extensive_form.improving import REGRET_TOLERANCE
from psro.extensive_form.reached import LiveGame
from psro.extensive_form.restricted_solves import SETTLE_GROWTH, RestrictedSolves
from psro.extensive_form.sequence_form import SequenceFormGame
from psro.extensive_form.sequence_lp import SequenceFormLP, lp_applies
from psro.extensive_form.sequence_passes import behaviour

EXACT = REGRET_TOLERANCE
"""Least counterfactual regret of an improving action, times the game's largest absolute return
(:data:`~psro.extensive_form.improving.REGRET_TOLERANCE`, as ``xdo --xdo-expansion
improving`` takes it)."""
CFR_SHARE = 0.3
"""With a CFR-family restricted solver: each restricted solve runs until the restricted game's
NashConv is at most this share of the last restricted equilibrium's NashConv in the whole
game."""
CFR_CHECK = 10
"""Iterations between two of a restricted CFR solve's NashConv checks."""


class TreeDoubleOracle:
    """The double oracle of the module docstring on ``tree`` (two players, zero-sum:
    ``ValueError`` otherwise), its restricted LPs by HiGHS's ``method`` (a name of
    :data:`~psro.extensive_form.sequence_lp.LP_METHODS`), or with ``variant`` (a name of
    :data:`~psro.extensive_form.cfr_variants.VARIANTS`) its restricted games solved by that
    CFR-family variant (module docstring), each restricted solve run to ``cfr_share`` (in
    (0, 1]; ``ValueError`` otherwise) of the last NashConv, and with ``settled_variant`` by
    that one, its average carried over, once the restricted game grows by less than
    ``settle_growth`` of the game's actions
    (:class:`~psro.extensive_form.restricted_solves.RestrictedSolves`). Each :meth:`step` is
    one iteration."""

    def __init__(self, tree: SequenceFormGame, method: str = "simplex",
                 variant: str | None = None, cfr_share: float = CFR_SHARE,
                 settled_variant: str | None = None, settle_growth: float = SETTLE_GROWTH):
        if not lp_applies(tree):
            raise ValueError(f"the tree double oracle needs a two-player zero-sum game; "
                             f"{tree.name!r} is not one")
        if not 0.0 < cfr_share <= 1.0:
            raise ValueError(f"cfr_share must be in (0, 1]; got {cfr_share!r}")
        if settled_variant is not None and variant is None:
            raise ValueError("settled_variant needs a CFR-family variant for the restricted "
                             "solves before the restricted game settles; got variant=None")
        self.tree = tree
        self.method = method
        self.variant = None if variant is None else variant_named(variant)
        self.cfr_share = float(cfr_share)
        """With a CFR-family variant: the share of the last NashConv in the whole game at which
        a restricted solve stops (``CFR_SHARE`` unless told otherwise)."""
        self.game = compact_game(tree, [tree.uniform_policy(p) > 0 for p in range(2)])
        """The whole game's compact arrays, which every pass walks."""
        self.tolerance = EXACT * float(np.abs(tree.leaf_returns).max())
        self._lp = SequenceFormLP(tree) if self.variant is None else None
        self._solves = None if self.variant is None else RestrictedSolves(
            tree, self.game, self.variant,
            None if settled_variant is None else variant_named(settled_variant), settle_growth)
        """The CFR-family restricted solves' runs (None with the LP); a run a ``stop_below``
        check interrupted goes on at the next step."""
        self._nash_conv = float("inf")
        self._target = 0.0
        self.allowed: list[np.ndarray] = []
        """Each player's allowed actions by compact sequence (entry 0, the empty sequence,
        True); empty until the first :meth:`step` starts the restricted game."""
        self.iterations = 0
        self.responses = 0
        """Iterations that found no improving action and added best responses' actions."""
        self.restricted_iterations = 0
        """CFR-family iterations run on the restricted games so far (0 with the LP)."""
        self._raw: list[np.ndarray] = []
        self._restricted: list[np.ndarray] = []
        self.value = float("nan")
        """Player 0's value of the last restricted game."""
        self.exploitability = float("inf")
        """The last restricted equilibrium's exploitability in the whole game."""
        self.finished = False
        """Whether the last restricted equilibrium is one of the whole game (module
        docstring)."""

    def _start(self) -> None:
        """The first restricted game: each player's best response to the uniform policy."""
        players = self.game.players
        uniform = [uniform_plan(player.start, player.end, player.parent, len(player.sequences))
                   for player in players]
        self.allowed = [np.zeros(len(player.sequences), dtype=bool) for player in players]
        for p, player in enumerate(players):
            self.allowed[p][0] = True
            best_actions(*self._leaves(p), uniform[1 - p], player.start, player.end,
                         player.parent, self.allowed[p])

    def _leaves(self, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (self.game.leaf_seqs[p], self.game.leaf_seqs[1 - p],
                self.game.leaf_weights[p])

    def allowed_actions(self) -> list[np.ndarray]:
        """Each player's restricted game as booleans (num_infosets, num_actions)."""
        out = []
        for p, player in enumerate(self.game.players):
            info = self.tree.players[p]
            mask = np.zeros((info.num_infosets, self.tree.num_actions), dtype=bool)
            seqs = player.sequences[self.allowed[p]][1:]
            mask[info.seq_infoset[seqs], info.seq_action[seqs]] = True
            out.append(mask)
        return out

    @property
    def settled(self) -> bool:
        """Whether the restricted solves run ``settled_variant`` now (never without one)."""
        return self._solves is not None and self._solves.settled

    def share(self, allowed: list[np.ndarray] | None = None) -> float:
        """The share of the game's (information set, action) pairs the restricted game
        ``allowed`` (booleans by compact sequence; by default the current one, after the first
        :meth:`step`) allows."""
        allowed = self.allowed if allowed is None else allowed
        return sum(int(a.sum()) - 1 for a in allowed) / sum(len(a) - 1 for a in allowed)

    def _live(self) -> LiveGame:
        """The part of the game both restricted players reach, by the tree's numbering."""
        players, tree = self.game.players, self.tree
        parts = live_part(*self.game.leaf_seqs, *self.allowed,
                          *(getattr(player, name) for player in players
                            for name in ("start", "end", "parent")))
        sequences, infosets = [], []
        for p, player in enumerate(players):
            seqs = np.zeros(tree.players[p].num_sequences, dtype=bool)
            seqs[player.sequences] = parts[1 + 2 * p]
            sets = np.zeros(tree.players[p].num_infosets, dtype=bool)
            sets[player.infosets] = parts[2 + 2 * p]
            sequences.append(seqs)
            infosets.append(sets)
        leaves = np.zeros(len(tree.leaf_chance), dtype=bool)
        leaves[self.game.leaves] = parts[0]
        return LiveGame(leaves, sequences, infosets)

    def policies(self) -> list[np.ndarray]:
        """The last restricted equilibrium, each player's (num_infosets, num_actions) action
        probabilities (uniform over the restricted game's actions where its plan does not
        reach); empty before the first :meth:`step`."""
        if self._raw and not self._restricted:
            self._restricted = self.allowed_actions()
        return [behaviour(self.tree, p, raw, allowed)
                for p, (raw, allowed) in enumerate(zip(self._raw, self._restricted,
                                                       strict=True))]

    def _solve_cfr(self, deadline: float, stop_below: float) -> tuple[list[np.ndarray],
                                                                       tuple | None]:
        """The restricted game's average plans (by the tree's sequences) after a warm-started
        CFR-family solve to ``cfr_share`` of the last NashConv or to ``deadline``, and, where
        a check in the whole game (at each check whose restricted NashConv is at most twice
        ``stop_below``) interrupted it first, the average's exploitability there at most
        ``stop_below``, that check's :meth:`measured` (None otherwise): the next call then
        resumes the same solve."""
        solves = self._solves
        if solves.run is None:
            solves.begin(self.allowed, self.share())
            self._target = max(self.cfr_share * self._nash_conv, self.tolerance)
        run, begun, checked = solves.run, solves.run.t, None
        while True:
            run.run(CFR_CHECK)
            restricted = run.nash_conv()  # at most the whole game's NashConv
            if restricted <= self._target or time.perf_counter() >= deadline:
                break
            if restricted <= 2 * stop_below:
                raw = run.average_plans_on_tree()
                checked = self.measured(raw)
                if checked[0] / 2 <= stop_below:
                    break
                checked = None
        self.restricted_iterations += run.t - begun
        self.value = float("nan")
        if checked is not None:
            return raw, checked
        return solves.finish(), None

    def measured(self, raw: list[np.ndarray], allowed: list[np.ndarray] | None = None) -> \
            tuple[float, int, list[np.ndarray], list[np.ndarray]]:
        """The whole game's NashConv of the restricted plans ``raw`` (each player's, by the
        tree's sequences), completed by best play within the restricted game ``allowed``
        (booleans by compact sequence; by default the current one) where they do not reach;
        the number of improving actions, those actions (booleans by compact sequence) and the
        completed plans (by compact sequence)."""
        players, allowed = self.game.players, self.allowed if allowed is None else allowed
        plans = [completed_plan(one[player.sequences], mask, player.start, player.end,
                                player.parent)
                 for one, mask, player in zip(raw, allowed, players, strict=True)]
        added = [np.zeros_like(a) for a in allowed]
        nash_conv, marked = 0.0, 0
        for p, player in enumerate(players):
            gain, count = improving_actions(*self._leaves(p), plans[1 - p], plans[p],
                                            player.start, player.end, player.parent,
                                            allowed[p], self.tolerance, added[p])
            nash_conv += max(gain, 0.0)
            marked += count
        return nash_conv, marked, added, plans

    def step(self, deadline: float = float("inf"), stop_below: float = 0.0) -> float:
        """One iteration (module docstring); returns the restricted equilibrium's
        exploitability. :class:`~psro.extensive_form.sequence_lp.LinearProgramError` where
        HiGHS fails, :class:`~psro.extensive_form.sequence_lp.LinearProgramTimeout` where the
        restricted LP is not solved by ``deadline`` (a ``time.perf_counter()`` reading; nothing
        is added, a later step solves the same LP). A CFR-family restricted solve stops at
        ``deadline`` if it comes first, and as soon as a check of its
        average finds its exploitability in the whole game at most ``stop_below`` (checked
        every ``CFR_CHECK`` iterations once the restricted NashConv is at most twice
        ``stop_below``: until then it cannot be)."""
        interrupted = None
        if not self.allowed:
            self._start()
        if self._lp is not None:
            self._restricted = self.allowed_actions()
            left = None if deadline == float("inf") else max(deadline - time.perf_counter(), 0.0)
            self._raw, self.value = self._lp.solve_plans(self._restricted, self.method,
                                                         self._live(), left)
        else:
            self._restricted = []  # the allowed actions' masks, built when policies() asks
            self._raw, interrupted = self._solve_cfr(deadline, stop_below)
        if interrupted is None:
            nash_conv = self._grow(*self.measured(self._raw))
        else:  # the same restricted solve goes on at the next step; nothing is added
            nash_conv = interrupted[0]
            self.finished = nash_conv <= self.tolerance
        self.iterations += 1
        self.exploitability = nash_conv / 2
        return self.exploitability

    def _grow(self, nash_conv: float, marked: int, added: list[np.ndarray],
              plans: list[np.ndarray]) -> float:
        """After a finished restricted solve whose :meth:`measured` is given: add the
        improving actions (with the LP, a best response's where there are none), or mark the
        double oracle finished; returns the NashConv."""
        if marked == 0 and nash_conv > self.tolerance and self.variant is None:
            self.responses += 1
            for p, player in enumerate(self.game.players):
                best_actions(*self._leaves(p), plans[1 - p], player.start, player.end,
                             player.parent, added[p])
                added[p] &= ~self.allowed[p]
        self.finished = nash_conv <= self.tolerance or (
            self.variant is None and not any(a.any() for a in added))
        self._nash_conv = nash_conv
        if not self.finished:
            for allowed, new in zip(self.allowed, added, strict=True):
                allowed |= new
        return nash_conv


__all__ = ["EXACT", "TreeDoubleOracle"]
