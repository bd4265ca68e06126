"""Benchmark: why ``xdo`` is not ahead of the whole game's tabular solvers on the walkable games,
measured. XDO must solve its last restricted game, which holds most of the full game; this
prints, per game, what that last solve alone costs beside one solve of the whole game.

Run: ``python experiments/bench_xdo_floor.py [--games ...] [--budget 120] [--threshold 1e-3]
[--parts ...] [--dcfr-iterations K ...]``.

For each game (2 CPUs, one process):

1. ``xdo`` with the LP, growing by responses, run until its restricted game is complete (an
   exact equilibrium) or ``--budget`` run-clock seconds: its time, iterations, and its last
   restricted game's share of the (information set, action) pairs of the full game;
2. that last restricted game's LP solved alone (a lower bound on any ``xdo, lp`` run's time:
   it solves that LP at its end), beside the whole game's LP;
3. ``xdo`` with CFR+ to ``--threshold``: the CFR+ iterations of all its restricted solves
   together (each costs about one iteration of CFR on the whole game: the restricted game is
   the full tree with actions masked), beside DCFR's and CFR+'s iterations to that threshold on
   the whole game; and the same iterations weighted by the share of the full game's leaves (and
   of its information sets) that each solve's restricted game reaches: what they would cost, in
   whole-game iterations, on a tree pruned to the part of the game the restricted players
   reach.
4. a double oracle on LPs from a better first restricted game (``--dcfr-iterations K ...``):
   the actions that the average policy of K DCFR iterations on the whole game plays with
   probability above ``START_FLOOR``; then, as ``xdo`` with exact responses, the restricted
   LP, the exact exploitability of its solution, and each player's best response added, until
   no response adds an action. It prints the time to each threshold (DCFR's iterations
   included), the LPs solved and the last restricted game's share of the actions, beside the
   whole game's LP (with the share of the actions its equilibrium plays: a double oracle that
   ends at that equilibrium ends with all of them) and DCFR to each threshold, in one process.

5. a double oracle on LPs that adds only *improving* actions (``--parts improving``): it starts
   from ``xdo``'s first restricted game (each player's best response to the uniform policy),
   then after each restricted LP adds, at every information set where some action has a
   positive counterfactual regret against the LP's solution (that action's counterfactual
   value, the solution played below it, above the solution's own), the actions of largest
   regret; where no action has one, each player's best response, as ``xdo`` adds it. It stops
   at an exact equilibrium (exploitability at most ``EXACT``) or when the best responses add
   nothing. As ``xdo`` does, the regrets are against the restricted LP's solution with a
   restricted best response where its own players do not reach (``best_off_path``). Printed
   beside the whole game's LP and DCFR, in one process: seconds to each threshold, LPs
   solved (of them, the LPs after which best responses were added) and the last restricted
   game's share of the actions. ``xdo --xdo-expansion improving`` grows its restricted game
   this way, with a best response and a run directory each iteration. ``--lp-method ipm``
   solves step 5's LPs (the whole game's too) by HiGHS's interior-point method.

6. what knowing an equilibrium's support would give (``--parts support``): the whole game's
   LP, the (information set, action) pairs its equilibrium plays (positive realization
   weight; the lowest legal action where none), and on those alone both ``xdo``'s restricted
   LP (both players restricted) and the two one-sided LPs (each player restricted, against
   an opponent with every action, as ``anytime`` finds its mixtures): time and the exact
   exploitability of what each returns.
7. a double oracle on the one-sided LPs (``--parts one_sided``): from the start of step 4,
   the two one-sided LPs, the exact exploitability of their policies, then each player's
   best response to the opponent's policy of that player's LP added, until an exact
   equilibrium (``EXACT``), no response adds an action, or ``--budget`` seconds. Printed
   beside the whole game's LP (by simplex and by interior point) and DCFR to each threshold,
   in one process.
8. the restricted LPs of step 5 (``--parts pruned``): each solved as ``SequenceFormLP`` solves
   it, on the part of the game its restricted players reach (:func:`live`), and as the whole
   game's LP with the disallowed sequences bounded to zero (the reference, written here):
   their summed times, the ratio, the largest of the restricted LPs' ratios, and the largest
   difference between the two values.

9. the floor of a double oracle on CFR-family restricted solves (``--parts final``): the tree
   double oracle ``xdo_cfr`` (``psro solve-tree --solver xdo_cfr``) run until its average
   crosses ``--threshold`` (time, iterations, and its restricted game's share of the actions
   and of the leaves then); then DCFR, DCFR+, PCFR+ and CFR+ each run on that final restricted game,
   known in advance, and on the whole game, from scratch, their average measured over the
   whole game every ``FINAL_CHECK`` iterations (measurements off the clock): iterations and
   seconds to ``--threshold`` and seconds an iteration. A double oracle ends on a restricted
   game that holds a ``--threshold`` equilibrium of the whole game, and this one ends on this
   restricted game: a solve of it alone, from scratch, is about what its last restricted solve
   costs at best (not a proof: which of the restricted game's equilibria a solve finds
   differs, and on Leduc DCFR from scratch on ``xdo_cfr``'s last restricted game at 1e-3
   stays above 1e-2 over the whole game, where ``xdo_cfr``'s warm-started solve crossed
   1e-3; ``not reached`` in the table). Last, what the
   equilibrium's own support gives: DCFR to ``--threshold`` / 100 on the whole game, the
   actions its average plays with probability above ``SUPPORT_FLOOR`` (the most likely
   where none), and DCFR on the restricted game of those actions, as many iterations as the
   whole game needed to ``--threshold``: its share of the actions and leaves and its
   exploitability over the whole game (the restricted game holds an equilibrium of the whole
   game, but not the opponent's deviations that punish its own other equilibria).

10. where ``xdo_dcfr+``'s clock goes (``--parts split``): the tree double oracle ``xdo_dcfr+``
    (``psro solve-tree --solver xdo_dcfr+``) run until its average crosses ``--threshold``,
    its seconds split by phase (growing, CFR+ restricted solves, before the restricted game
    settles; settled, DCFR+ ones after), with each phase's double-oracle and restricted
    iterations, and by work: restricted iterations, restricted NashConv checks, cutting out
    each restricted game (:func:`psro.extensive_form.compact.restrict`, with its run's start),
    passes over the whole game (improving actions and whole-game checks) and the rest. Beside
    it, DCFR+ from scratch on the restricted game it ended with, known in advance, and on the
    whole game (measured as in part 9). The second minus the first is all a double oracle
    ending on that restricted game can gain; what ``xdo_dcfr+`` pays for it is its growing
    phase and its settled phase's work besides the restricted iterations.

``--parts`` chooses among ``floor`` (1 and 2), ``cfr`` (3), ``started`` (4), ``improving``
(5), ``support`` (6), ``one_sided`` (7), ``pruned`` (8), ``final`` (9) and ``split`` (10).
Leduc with 13 ranks is the game string ``psro.bench.suites.LEDUC_13``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NamedTuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from scipy.optimize import linprog  # noqa: E402

import psro  # noqa: E402
from psro.algorithms.xdo import EQUILIBRIUM  # noqa: E402
from psro.algorithms.xdo_responses import with_lowest_legal  # noqa: E402
from psro.evaluation.exploitability import exact_exploitability  # noqa: E402
from psro.extensive_form.cfr_variants import variant_named  # noqa: E402
from psro.extensive_form.compact import restrict  # noqa: E402
from psro.extensive_form.compiled_cfr import CompiledRun, load_kernels  # noqa: E402
from psro.extensive_form.improving import improving_actions, prepared_players  # noqa: E402
from psro.extensive_form.reached import live  # noqa: E402
from psro.extensive_form.restricted_cfr import RestrictedCFR  # noqa: E402
from psro.extensive_form.restricted_solves import RestrictedSolves  # noqa: E402
from psro.extensive_form.sequence_form import SequenceFormGame  # noqa: E402
from psro.extensive_form.sequence_lp import LP_METHODS, SequenceFormLP  # noqa: E402
from psro.extensive_form.tree_double_oracle import TreeDoubleOracle  # noqa: E402
from psro.extensive_form.tree_solvers import solve_tree  # noqa: E402

GAMES = ("leduc_poker", "liars_dice",
         "goofspiel(num_cards=5,imp_info=True,points_order=descending)",
         "goofspiel(num_cards=6,imp_info=True,points_order=descending)",
         "liars_dice(numdice=2,dice_sides=3)")


def lp_floor(game: str, budget: float) -> None:
    """Steps 1 and 2."""
    run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver="lp", xdo_expansion="responses",
                    seed=0)
    rows = run.run(time_budget_s=budget)
    tree, algorithm = run.tree, run.parts.algorithm
    allowed = [algorithm.allowed(p, pop) for p, pop in enumerate(run.population)]
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    share = share_of(allowed, legal)
    lp = SequenceFormLP(tree)
    start = time.perf_counter()
    lp.solve(allowed)
    last = time.perf_counter() - start
    start = time.perf_counter()
    lp.solve(legal)
    whole = time.perf_counter() - start
    print(f"| {game} | {rows[-1]['wall_time_s']:.3g} s ({len(rows) - 1}, "
          f"{rows[-1]['exploitability']:.2g}) | {share:.0%} | {last:.3g} s | {whole:.3g} s |",
          flush=True)


def cfr_iterations(game: str, budget: float, threshold: float) -> None:
    """Step 3."""
    run = psro.PSRO(game, "exact", algorithm="xdo", xdo_solver="cfr", seed=0)
    rows = run.run(time_budget_s=budget, target_exploitability=threshold)
    solved = [m for m in run.population[0] if m.metadata.get("oracle") == EQUILIBRIUM]
    solves = [m.metadata["cfr_iterations"] for m in solved]
    reached = rows[-1]["exploitability"] <= threshold
    whole = {solver: solve_tree(run.tree, solver, (threshold,), budget).crossings.get(threshold)
             for solver in ("dcfr", "cfr+")}
    cells = [f"{c['iterations']:,} ({c['seconds']:.3g} s)" if c else "-" for c in whole.values()]
    leaves, infosets = reached_iterations(run, solved)
    print(f"| {game} | {sum(solves):,} in {len(solves)} solves ({rows[-1]['wall_time_s']:.3g} s"
          f"{'' if reached else ', not reached'}) | {leaves:,.0f} / {infosets:,.0f} | "
          + " | ".join(cells) + " |", flush=True)


def reached_iterations(run: psro.PSRO, solved: list) -> tuple[float, float]:
    """Step 3's restricted CFR iterations weighted by the share of the full game's leaves (and,
    second, of its information sets, averaged over the players) that each solve's restricted
    game reaches (:func:`live`): what they would cost, counted in whole-game iterations, if
    each walked only that part of the tree."""
    algorithm, leaves, infosets = run.parts.algorithm, 0.0, 0.0
    for member in solved:
        k = member.metadata["iteration"]
        allowed = [algorithm.allowed(p, [m for m in pop if m.metadata.get("iteration", 0) <= k])
                   for p, pop in enumerate(run.population)]
        reached = live(run.tree, allowed)
        leaves += member.metadata["cfr_iterations"] * float(reached.leaves.mean())
        infosets += member.metadata["cfr_iterations"] * float(np.mean(
            [i.mean() for i in reached.infosets]))
    return leaves, infosets


THRESHOLDS = (1e-3, 1e-4, 1e-6)
START_FLOOR = 1e-3
"""Least probability of an action in DCFR's average policy for it to join the first restricted
game (step 4)."""


def _crossings(thresholds: tuple[float, ...], value: float, seconds: float,
               found: dict[float, float]) -> None:
    for threshold in thresholds:
        if value <= threshold and threshold not in found:
            found[threshold] = seconds


EXACT = 1e-9
"""Exploitability at which step 5 calls its LP solution an exact equilibrium (the LP's own
accuracy: about 1e-9 to 1e-15 on these games)."""


def share_of(allowed: list[np.ndarray], legal: list[np.ndarray]) -> float:
    """The share of the legal (information set, action) pairs that ``allowed`` holds."""
    return sum(int(a.sum()) for a in allowed) / sum(int(a.sum()) for a in legal)


def times(found: dict[float, float]) -> str:
    """Seconds to each of ``THRESHOLDS`` (``-`` where not reached), joined by slashes."""
    return " / ".join(f"{found[t]:.3g}" if t in found else "-" for t in THRESHOLDS)


def dcfr_times(tree: SequenceFormGame, budget: float) -> str:
    """DCFR on the whole ``tree``: :func:`times` of its crossings in ``budget`` seconds."""
    crossings = solve_tree(tree, "dcfr", THRESHOLDS, budget).crossings
    return times({t: c["seconds"] for t, c in crossings.items()})


class DoubleOracle(NamedTuple):
    """What a double oracle of step 4 or 5 found."""

    crossings: dict[float, float]
    """Threshold -> seconds at which an LP's solution was first that close (step 4: DCFR
    included)."""
    lps: int
    """Restricted LPs solved."""
    responses: int
    """LPs after which the best responses were asked for actions (step 5: after which no
    action had a positive regret)."""
    share: float
    """The last restricted game's share of the full game's (information set, action) pairs."""
    exploitability: float
    """The last LP solution's exact exploitability."""
    policies: list[np.ndarray]
    """That solution, each player's (num_infosets, num_actions) action probabilities."""
    games: list[list[np.ndarray]]
    """The restricted games solved, in order."""


def double_oracle(tree: SequenceFormGame, allowed: list[np.ndarray], start: float,
                  max_lps: int, prepared: list | None = None,
                  method: str = "simplex") -> DoubleOracle:
    """From the restricted game ``allowed`` on a two-player zero-sum ``tree``: the restricted
    LP, the exact exploitability of its solution (crossings timed from ``start``), then the
    actions added, until nothing is added or ``max_lps`` LPs. Without ``prepared`` (step 4)
    each player's best response; with it (step 5, :func:`prepared_players` of ``tree``) the
    improving actions, the best responses' where none is new, stopping at an exploitability
    of ``EXACT``."""
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    found: dict[float, float] = {}
    lp = SequenceFormLP(tree)
    lps = responses = 0
    games = []
    while lps < max_lps:
        policies, _ = lp.solve(allowed, method)
        games.append(allowed)
        lps += 1
        plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
        value = exact_exploitability(tree, plans).exploitability
        _crossings(THRESHOLDS, value, time.perf_counter() - start, found)
        if prepared is not None and value <= EXACT:
            break
        added = [a & ~b for a, b in zip(
            improving_actions(tree, prepared, policies, EXACT, plans, allowed),
            allowed, strict=True)] if prepared is not None else []
        if not any(a.any() for a in added):
            responses += 1
            added = [(tree.best_response(p, plans)[0] > 0) & ~allowed[p] for p in range(2)]
            if not any(a.any() for a in added):
                break
        allowed = [a | b for a, b in zip(allowed, added, strict=True)]
    share = share_of(allowed, legal)
    return DoubleOracle(found, lps, responses, share, value, policies, games)


def started_double_oracle(tree: SequenceFormGame, iterations: int,
                          max_lps: int = 60) -> DoubleOracle:
    """Step 4 for ``iterations`` DCFR iterations on a two-player zero-sum ``tree``: a double
    oracle on restricted LPs, started from the actions DCFR's average policy plays, until no
    best response adds an action (an exact equilibrium: exploitability 0 to the LP's
    tolerance, about 1e-9) or ``max_lps`` LPs."""
    start = time.perf_counter()
    return double_oracle(tree, dcfr_start(tree, iterations), start, max_lps)


def dcfr_start(tree: SequenceFormGame, iterations: int) -> list[np.ndarray]:
    """Each player's actions that the average policy of ``iterations`` DCFR iterations on the
    whole ``tree`` plays with probability above ``START_FLOOR`` (the lowest legal action where
    none is)."""
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    dcfr = RestrictedCFR(tree, warm=False, variant="dcfr")
    dcfr.replay(legal, iterations)
    average = dcfr.average(legal)
    return with_lowest([(average[p] > START_FLOOR) & legal[p] for p in range(2)], tree)


def with_lowest(allowed: list[np.ndarray], tree: SequenceFormGame) -> list[np.ndarray]:
    """``allowed`` with each player's lowest legal action at every information set where it
    allows none (in place; ``xdo``'s own rule)."""
    return [with_lowest_legal(a, info.legal) for a, info in zip(allowed, tree.players,
                                                                  strict=True)]


def improving_double_oracle(tree: SequenceFormGame, max_lps: int = 80,
                            method: str = "simplex") -> DoubleOracle:
    """Step 5 on a two-player zero-sum ``tree`` (see the module docstring), its LPs solved by
    HiGHS's ``method`` (a name of ``LP_METHODS``)."""
    start = time.perf_counter()
    prepared = prepared_players(tree)
    uniform = [tree.realization_plan(p, tree.uniform_policy(p)) for p in range(2)]
    allowed = [tree.best_response(p, uniform)[0] > 0 for p in range(2)]
    return double_oracle(tree, allowed, start, max_lps, prepared, method)


def improving(game: str, budget: float, method: str = "simplex") -> None:
    """Step 5, one row per game, every LP (the whole game's too) by ``method``."""
    tree = SequenceFormGame(pyspiel.load_game(game), max_nodes=3_000_000, name=game)
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    start = time.perf_counter()
    SequenceFormLP(tree).solve(legal, method)
    whole = time.perf_counter() - start
    dcfr = dcfr_times(tree, budget)
    run = improving_double_oracle(tree, method=method)
    print(f"| {game} | {whole:.3g} s | {dcfr} | {times(run.crossings)} ({run.lps} LPs, "
          f"{run.responses} with best responses, {run.share:.0%}) |", flush=True)


def started(game: str, dcfr_iterations: list[int], budget: float,
            one_sided_lps: bool = False) -> None:
    """Step 4 (or, with ``one_sided_lps``, step 7), one row per game: the whole game's LP (with
    its equilibrium's share of the actions; step 7: by simplex and by interior point), DCFR, and
    the double oracle from each number of DCFR iterations."""
    tree = SequenceFormGame(pyspiel.load_game(game), max_nodes=3_000_000, name=game)
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    whole = []
    for method in LP_METHODS if one_sided_lps else ("simplex",):
        start = time.perf_counter()
        policies, _ = SequenceFormLP(tree).solve(legal, method=method)
        whole.append(f"{time.perf_counter() - start:.3g} s")
    if not one_sided_lps:
        whole[0] += f" ({share_of(support_of(tree, policies), legal):.0%})"
    cells = [" / ".join(whole), dcfr_times(tree, budget)]
    for k in dcfr_iterations:
        run = one_sided_double_oracle(tree, k, budget) if one_sided_lps \
            else started_double_oracle(tree, k)
        cells.append(f"{times(run.crossings)} ({run.lps} LP{'s' if run.lps > 1 else ''}, "
                     f"{run.share:.0%})")
    print(f"| {game} | " + " | ".join(cells) + " |", flush=True)


def support_of(tree: SequenceFormGame, policies: list[np.ndarray]) -> list[np.ndarray]:
    """Each player's (information set, action) pairs that ``policies`` play with positive
    realization weight (above 1e-12), and the lowest legal action where none is."""
    allowed = []
    for p in range(2):
        info = tree.players[p]
        plan = tree.realization_plan(p, policies[p])
        played = np.flatnonzero(plan[1:] > 1e-12) + 1
        mask = np.zeros((info.num_infosets, tree.num_actions), dtype=bool)
        mask[info.seq_infoset[played], info.seq_action[played]] = True
        allowed.append(mask)
    return with_lowest(allowed, tree)


def one_sided(lp: SequenceFormLP, allowed: list[np.ndarray],
              legal: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each player's least exploitable policy among those its ``allowed`` actions give, against
    an opponent with every legal action (player 0's from the LP that restricts player 0 only,
    player 1's from the one that restricts player 1 only); and the opponent's policy from
    each of those LPs (its equilibrium of that LP: ``[player 1's from the first, player 0's
    from the second]``)."""
    first, _ = lp.solve([allowed[0], legal[1]])
    second, _ = lp.solve([legal[0], allowed[1]])
    return [first[0], second[1]], [first[1], second[0]]


def support(game: str) -> None:
    """Step 6, one row per game."""
    tree = SequenceFormGame(pyspiel.load_game(game), max_nodes=3_000_000, name=game)
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    lp = SequenceFormLP(tree)
    start = time.perf_counter()
    policies, _ = lp.solve(legal)
    whole = time.perf_counter() - start
    allowed = support_of(tree, policies)
    share = share_of(allowed, legal)
    start = time.perf_counter()
    restricted, _ = lp.solve(allowed)
    both = time.perf_counter() - start
    start = time.perf_counter()
    each, _ = one_sided(lp, allowed, legal)
    sides = time.perf_counter() - start
    cells = [f"{seconds:.3g} s ({_exploitability(tree, found):.2g})"
             for seconds, found in ((both, restricted), (sides, each))]
    print(f"| {game} | {whole:.3g} s | {share:.0%} | " + " | ".join(cells) + " |", flush=True)


FINAL_CHECK = 10
"""Part 9: iterations between two measurements of a solve's average over the whole game."""
SUPPORT_FLOOR = 1e-6
"""Part 9: the least probability of an action of the equilibrium's support."""


def whole_exploitability(oracle: TreeDoubleOracle, run: CompiledRun,
                         allowed: list[np.ndarray]) -> float:
    """The exploitability over the whole game (``oracle.game``) of ``run``'s average, a run on
    the restricted game ``allowed`` (booleans by the whole game's compact sequence):
    :meth:`TreeDoubleOracle.measured` (its plans completed by best play within the restricted
    game where they do not reach, each player's best-response gain over the whole game,
    summed), over 2."""
    return oracle.measured(run.average_plans_on_tree(), allowed)[0] / 2


def restricted_solve(oracle: TreeDoubleOracle, allowed: list[np.ndarray], variant: str,
                     threshold: float, budget: float,
                     iterations: int | None = None) -> tuple[CompiledRun, float, float]:
    """``variant`` from scratch on the restricted game ``allowed`` of ``oracle.game`` until its
    average's :func:`whole_exploitability` is at most ``threshold`` (measured every
    ``FINAL_CHECK`` iterations, off the clock), ``budget`` seconds pass, or (where given)
    ``iterations`` ran: the run, its seconds, the last exploitability."""
    tree = oracle.tree
    run = CompiledRun(tree, restrict(oracle.game, (allowed[0], allowed[1])),
                      [np.zeros(info.num_sequences) for info in tree.players],
                      variant_named(variant))
    seconds = 0.0
    while True:
        start = time.perf_counter()
        run.run(FINAL_CHECK)
        seconds += time.perf_counter() - start
        value = whole_exploitability(oracle, run, allowed)
        if (value <= threshold and iterations is None) or seconds >= budget or \
                (iterations is not None and run.t >= iterations):
            return run, seconds, value


def leaf_share(oracle: TreeDoubleOracle, allowed: list[np.ndarray]) -> float:
    """The share of the whole game's leaves both players of the restricted game ``allowed``
    reach."""
    return len(restrict(oracle.game, (allowed[0], allowed[1])).leaves) / len(oracle.game.leaves)


def supported(oracle: TreeDoubleOracle, run: CompiledRun) -> list[np.ndarray]:
    """The actions ``run``'s average (a run on the whole game) plays with probability above
    ``SUPPORT_FLOOR``, and its most likely one at every information set, by compact
    sequence."""
    allowed = []
    for probs, player in zip(run.average_probs(), oracle.game.players, strict=True):
        kept = probs > SUPPORT_FLOOR
        kept[0] = True
        for first, last in zip(player.start, player.end, strict=True):
            kept[first + int(np.argmax(probs[first:last]))] = True
        allowed.append(kept)
    return allowed


def final_restricted(game: str, budget: float, threshold: float) -> None:
    """Part 9: one table of the rows of its docstring."""
    tree = psro.game_tree(game)
    oracle = TreeDoubleOracle(tree, variant="cfr+")
    seconds, exploitability = 0.0, np.inf
    while exploitability > threshold and seconds < budget:
        start = time.perf_counter()
        exploitability = oracle.step(start + budget - seconds, threshold)
        seconds += time.perf_counter() - start
    final = oracle.allowed
    whole = [np.ones_like(a) for a in final]
    print(f"\n{game}: `xdo_cfr` to {threshold:g} in {seconds:.3g} s ({oracle.iterations} "
          f"iterations, {exploitability:.3g}); its restricted game then: "
          f"{oracle.share():.0%} of the actions, {leaf_share(oracle, final):.0%} of the "
          f"leaves")
    table(f"solver | on that final restricted game: iterations, s to {threshold:g} | s an "
          f"iteration | on the whole game: iterations, s to {threshold:g} | s an iteration",
          ["dcfr", "dcfr+", "pcfr+", "cfr+"], lambda variant: print(
              "| " + " | ".join([variant] + [cell for allowed in (final, whole) for cell in
                                             _solve_cells(oracle, allowed, variant, threshold,
                                                          budget)]) + " |", flush=True))
    tight, _, _ = restricted_solve(oracle, whole, "dcfr", threshold / 100, budget)
    needed, _, _ = restricted_solve(oracle, whole, "dcfr", threshold, budget)
    allowed = supported(oracle, tight)
    run, _, value = restricted_solve(oracle, allowed, "dcfr", 0.0, budget, needed.t)
    print(f"\nThe support of DCFR's average at {threshold / 100:g} ({tight.t:,} iterations): "
          f"{oracle.share(allowed):.0%} of the actions, {leaf_share(oracle, allowed):.0%} of "
          f"the leaves; DCFR on it, {run.t:,} iterations: exploitability {value:.3g} over the "
          f"whole game",
          flush=True)


def _solve_cells(oracle: TreeDoubleOracle, allowed: list[np.ndarray], variant: str,
                 threshold: float, budget: float) -> list[str]:
    run, seconds, value = restricted_solve(oracle, allowed, variant, threshold, budget)
    reached = "" if value <= threshold else f", not reached ({value:.2g})"
    return [f"{run.t:,}, {seconds:.3g} s{reached}", f"{seconds / run.t * 1e3:.3g} ms"]


SPLIT = {"restricted iterations": (CompiledRun, "run"),
         "restricted checks": (CompiledRun, "nash_conv"),
         "restricting": (RestrictedSolves, "begin"),
         "whole-game passes": (TreeDoubleOracle, "measured")}
"""Part 10: the work a double oracle's clock is split into, by the method that does it."""


@contextmanager
def clock_split(seconds: dict[str, float]) -> Iterator[dict[str, float]]:
    """While inside, every call of a method of :data:`SPLIT` adds its seconds to ``seconds``
    under its label (the methods are restored on leaving)."""
    originals = {label: getattr(owner, name) for label, (owner, name) in SPLIT.items()}

    def timed(label: str) -> Callable:
        def call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return originals[label](*args, **kwargs)
            finally:
                seconds[label] += time.perf_counter() - start
        return call

    for label, (owner, name) in SPLIT.items():
        setattr(owner, name, timed(label))
    try:
        yield seconds
    finally:
        for label, (owner, name) in SPLIT.items():
            setattr(owner, name, originals[label])


class SettledSplit(NamedTuple):
    """Part 10's run of ``xdo_dcfr+``: its seconds to the threshold, its exploitability then,
    each phase's (growing, then settled) seconds, double-oracle iterations and restricted
    iterations, the seconds of each kind of work (:data:`SPLIT`) and the oracle."""

    seconds: float
    exploitability: float
    phases: dict[str, list]
    work: dict[str, float]
    oracle: TreeDoubleOracle


def settled_split(tree: SequenceFormGame, threshold: float, budget: float) -> SettledSplit:
    """``xdo_dcfr+`` on ``tree`` until its average crosses ``threshold`` or ``budget`` seconds
    pass, as :func:`~psro.extensive_form.tree_solvers.solve_tree` steps it, its clock split
    (part 10)."""
    oracle = TreeDoubleOracle(tree, variant="cfr+", settled_variant="dcfr+")
    phases = {"growing": [0.0, 0, 0], "settled": [0.0, 0, 0]}
    work, total, exploitability = dict.fromkeys(SPLIT, 0.0), 0.0, np.inf
    with clock_split(work):
        while exploitability > threshold and total < budget:
            start, done = time.perf_counter(), oracle.restricted_iterations
            exploitability = oracle.step(start + budget - total, threshold)
            took = time.perf_counter() - start
            total += took
            phase = phases["settled" if oracle.settled else "growing"]
            phase[0] += took
            phase[1] += 1
            phase[2] += oracle.restricted_iterations - done
    return SettledSplit(total, exploitability, phases, work, oracle)


def split_row(game: str, budget: float, threshold: float) -> None:
    """Part 10: one game's row."""
    run = settled_split(psro.game_tree(game), threshold, budget)
    oracle = run.oracle
    final, whole = oracle.allowed, [np.ones_like(a) for a in oracle.allowed]
    phases = [f"{seconds:.3g} s ({steps}, {iterations:,})"
              for seconds, steps, iterations in run.phases.values()]
    work = " / ".join(f"{seconds:.3g}" for seconds in
                      (*run.work.values(), run.seconds - sum(run.work.values())))
    reference = [_solve_cells(oracle, allowed, "dcfr+", threshold, budget)[0]
                 for allowed in (final, whole)]
    print(f"| {game} | {run.seconds:.3g} s ({oracle.iterations}, {run.exploitability:.2g}) | "
          f"{' | '.join(phases)} | {work} | {oracle.share():.0%}, "
          f"{leaf_share(oracle, final):.0%} | {' | '.join(reference)} |", flush=True)


def _exploitability(tree: SequenceFormGame, policies: list[np.ndarray]) -> float:
    plans = [tree.realization_plan(p, probs) for p, probs in enumerate(policies)]
    return exact_exploitability(tree, plans).exploitability


def one_sided_double_oracle(tree: SequenceFormGame, iterations: int, budget: float,
                            max_rounds: int = 40) -> DoubleOracle:
    """Step 7 on a two-player zero-sum ``tree``: from :func:`dcfr_start`, the one-sided LPs
    (:func:`one_sided`) and the exact exploitability of their two policies, then each player's
    best response to the opponent's policy of that player's LP added, until the exploitability
    is at most ``EXACT``, no response adds an action, ``max_rounds`` rounds (two LPs each) or
    ``budget`` seconds."""
    legal = [tree.uniform_policy(p) > 0 for p in range(2)]
    start = time.perf_counter()
    allowed = dcfr_start(tree, iterations)
    lp, found, rounds = SequenceFormLP(tree), {}, 0
    while rounds < max_rounds:
        policies, counters = one_sided(lp, allowed, legal)
        rounds += 1
        value = _exploitability(tree, policies)
        _crossings(THRESHOLDS, value, time.perf_counter() - start, found)
        if value <= EXACT or time.perf_counter() - start > budget:
            break
        # counters[p] is p's opponent's policy of p's LP; best_response reads the opponent's
        plans = [tree.realization_plan(0, counters[1]), tree.realization_plan(1, counters[0])]
        added = [(tree.best_response(p, plans)[0] > 0) & ~allowed[p] for p in range(2)]
        if not any(a.any() for a in added):
            break
        allowed = [a | b for a, b in zip(allowed, added, strict=True)]
    share = share_of(allowed, legal)
    return DoubleOracle(found, 2 * rounds, 0, share, value, policies, [])


def whole_formulation(lp: SequenceFormLP, allowed: list[np.ndarray]) -> float:
    """Player 0's value of the restricted game ``allowed`` from the whole game's LP, the
    disallowed sequences of player 0 bounded to zero and player 1's left out of the
    inequalities, nothing pruned (the reference of step 8; ``lp._inequalities`` and
    ``lp._flow`` are the matrices ``SequenceFormLP`` builds)."""
    tree = lp.tree
    mine, theirs = (np.r_[True, a[info.seq_infoset[1:], info.seq_action[1:]]]
                    for a, info in zip(allowed, tree.players, strict=True))
    s_0, duals = len(mine), lp._inequalities.shape[1] - len(mine)
    rows = np.flatnonzero(theirs)
    cost = np.zeros(s_0 + duals)
    cost[s_0] = -1.0
    bounds = np.zeros((s_0 + duals, 2))
    bounds[:s_0, 1] = np.where(mine, np.inf, 0.0)
    bounds[s_0:] = (-np.inf, np.inf)
    b_eq = np.zeros(lp._flow.shape[0])
    b_eq[0] = 1.0
    result = linprog(cost, A_ub=lp._inequalities[rows], b_ub=np.zeros(len(rows)),
                     A_eq=lp._flow, b_eq=b_eq, bounds=bounds, method="highs")
    return float(-result.fun)


def pruned(game: str) -> None:
    """Step 8, one row per game."""
    tree = SequenceFormGame(pyspiel.load_game(game), max_nodes=3_000_000, name=game)
    run = improving_double_oracle(tree)
    lp = SequenceFormLP(tree)
    seconds, ratios, gap, leaves = [0.0, 0.0], [], 0.0, []
    for allowed in run.games:
        start = time.perf_counter()
        _, value = lp.solve(allowed)
        middle = time.perf_counter()
        reference = whole_formulation(lp, allowed)
        end = time.perf_counter()
        seconds[0] += middle - start
        seconds[1] += end - middle
        ratios.append((end - middle) / (middle - start))
        gap = max(gap, abs(value - reference))
        leaves.append(np.mean(live(tree, allowed).leaves))
    print(f"| {game} | {len(run.games)} | {min(leaves):.2%}-{max(leaves):.1%} | "
          f"{seconds[1]:.3g} s | {seconds[0]:.3g} s | {seconds[1] / seconds[0]:.2g} "
          f"(up to {max(ratios):.2g}) | {gap:.1e} |", flush=True)


def table(header: str, games: list[str], row: Callable[[str], None]) -> None:
    """A table: ``header`` (its cells between bars, after a blank line), the separator, then
    ``row(game)`` prints each game's row."""
    print(f"\n| {header} |")
    print("|" + " --- |" * (header.count("|") + 1))
    for game in games:
        row(game)


def floor(games: list[str], budget: float) -> None:
    """Steps 1 and 2, one row per game."""
    table("game | `xdo, lp`: run clock (iterations, exploitability) | last restricted game, "
          "share of the actions | its LP alone | the whole game's LP", games,
          lambda game: lp_floor(game, budget))


def cfr_table(games: list[str], budget: float, threshold: float) -> None:
    """Step 3, one row per game."""
    table(f"game | `xdo, cfr` to {threshold:g}: CFR+ iterations of its restricted solves | "
          f"the same, weighted by the share of the leaves / information sets reached | "
          f"DCFR on the whole game | CFR+ on the whole game", games,
          lambda game: cfr_iterations(game, budget, threshold))


def started_table(args: argparse.Namespace, one_sided_lps: bool) -> None:
    """Step 4 (or, with ``one_sided_lps``, step 7): the header, then one row per game."""
    whole = "the whole game's LP, simplex / interior point" if one_sided_lps \
        else "the whole game's LP (its equilibrium's share of the actions)"
    label = "one-sided, " if one_sided_lps else ""
    table(f"game | {whole} | DCFR s to 1e-3 / 1e-4 / 1e-6 | " + " | ".join(
        f"{label}from {k} DCFR iterations: s to 1e-3 / 1e-4 / 1e-6 (LPs, last share)"
        for k in args.dcfr_iterations), args.games,
        lambda game: started(game, args.dcfr_iterations, args.budget, one_sided_lps))


PARTS = ("floor", "cfr", "started", "improving", "support", "one_sided", "pruned", "final",
         "split")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES), metavar="GAME")
    parser.add_argument("--budget", type=float, default=120.0)
    parser.add_argument("--threshold", type=float, default=1e-3)
    parser.add_argument("--lp-method", choices=LP_METHODS, default="simplex",
                        help="HiGHS's method for step 5's LPs, the whole game's included")
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument("--dcfr-iterations", nargs="+", type=int, default=[10, 30, 100],
                        metavar="K",
                        help="DCFR iterations whose support is the first restricted game")
    args = parser.parse_args()
    load_kernels()  # compiled CFR: loaded before any line is timed
    if "floor" in args.parts:
        floor(args.games, args.budget)
    if "cfr" in args.parts:
        cfr_table(args.games, args.budget, args.threshold)
    if "started" in args.parts:
        started_table(args, one_sided_lps=False)
    if "improving" in args.parts:
        table("game | the whole game's LP | DCFR s to 1e-3 / 1e-4 / 1e-6 | adding improving "
              "actions: s to 1e-3 / 1e-4 / 1e-6 (LPs, of them with best responses, last "
              "share)", args.games, lambda game: improving(game, args.budget, args.lp_method))
    if "support" in args.parts:
        table("game | the whole game's LP | its equilibrium's share of the actions | "
              "`xdo`'s restricted LP on them (exploitability) | the one-sided LPs on them "
              "(exploitability)", args.games, support)
    if "one_sided" in args.parts:
        started_table(args, one_sided_lps=True)
    if "pruned" in args.parts:
        table("game | restricted LPs | share of the leaves they reach | whole formulation "
              "| pruned | ratio | largest value difference", args.games, pruned)
    if "final" in args.parts:
        for game in args.games:
            final_restricted(game, args.budget, args.threshold)
    if "split" in args.parts:
        table(f"game | `xdo_dcfr+` to {args.threshold:g}: s (iterations, exploitability) | "
              f"growing: s (iterations, restricted iterations) | settled: s (iterations, "
              f"restricted iterations) | its seconds: " + " / ".join([*SPLIT, "other"]) +
              " | its last restricted game: share of the actions, of the leaves | DCFR+ on "
              f"it: iterations, s to {args.threshold:g} | DCFR+ on the whole game",
              args.games, lambda game: split_row(game, args.budget, args.threshold))

if __name__ == "__main__":
    main()
