"""Exact exploitability in the placement games (:mod:`psro.kernels.placement`): the policies
asked at every information set in batches, their sequence forms, one compiled walk of every
history on all cores, and the best responses up each player's trie.

The walk's cost is the game's: about 1.9e10 histories in phantom tic-tac-toe and classical dark
hex 3, every one visited unless neither player reaches it. It is split into the subtrees below
the histories of :data:`FRONTIER_DEPTH` moves, run by one thread per core (numba releases the
GIL), each adding to its own gradient arrays.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from psro.kernels.asking import asked_in_order
from psro.kernels.base import InfoBatch, KernelError, KernelExploitability, KernelSums, threads
from psro.kernels.placement import PlacementRules, PlayerTrie, tries
from psro.kernels.progress import MixtureProgress, summed_mixtures

FRONTIER_DEPTH = 3
"""Moves below the opening where the walk is cut into subtrees for the threads."""
CHUNK = 1 << 16
"""Information sets asked of a policy in one batch."""


def batch(rules: PlacementRules, trie: PlayerTrie, player: int, lo: int, hi: int) -> InfoBatch:
    """The information sets ``lo`` to ``hi - 1`` of ``player``'s trie as a policy is asked at
    them."""

    def label(row: int) -> str:
        path = trie.paths(lo + row, lo + row + 1)[0]
        return "'" + " ".join(f"{m // 2}{'*.'[m % 2]}" for m in path) + \
            "' (cell and outcome of each own move: * placed, . probed)"

    def states() -> list:
        raise KernelError("the placement kernel asks policies at tensors and strings, not "
                          "at states; give a network, a torch module or (phantom "
                          "tic-tac-toe) a mapping or TabularPolicy of information-state "
                          "strings")

    return InfoBatch(player, trie.tensors(rules, player, lo, hi),
                     trie.legal_mask(rules.cells, lo, hi),
                     lambda: rules.info_strings(player, trie.paths(lo, hi)), states, label)


def first_batch(rules: PlacementRules, player: int, prefix: list[int]) -> InfoBatch:
    """``player``'s first information set below the opening (its moves there ``prefix``), as
    a policy is asked at it: a check that costs nothing before the long work."""
    root = PlayerTrie(np.array([-1], dtype=np.int32), np.array([-1], dtype=np.int8),
                      np.array([rules.unknown(prefix)], dtype=np.int16), *[np.zeros(1)] * 2,
                      np.zeros(2), np.zeros(1), tuple(prefix))
    return batch(rules, root, player, 0, 1)


def sequence_forms(rules: PlacementRules, both: tuple[PlayerTrie, PlayerTrie], seats, ask,
                   seconds: dict, progress: MixtureProgress | None = None) -> tuple[list, int]:
    """Per player, the sequence form (one entry a sequence, the empty one last) of its
    mixture ``seats[p]``, each member asked by ``ask(policy, batch)``; and how many
    information sets were asked (``progress``: where an interrupted evaluation resumes)."""
    from psro.kernels import placement_walk as walk

    def add_member(player: int, policy, weight: float, total: np.ndarray) -> int:
        trie = both[player]
        reach = np.zeros(trie.sequences + 1)
        reach[-1] = 1.0
        chunks = [(lo, min(trie.nodes, lo + CHUNK)) for lo in range(0, trie.nodes, CHUNK)]
        makers = [lambda lo=lo, hi=hi: batch(rules, trie, player, lo, hi) for lo, hi in chunks]
        start = time.perf_counter()
        for (lo, _), probs in zip(chunks, asked_in_order(ask, policy, makers), strict=True):
            seconds["tabularise"] += time.perf_counter() - start
            start = time.perf_counter()
            walk.sequence_form(lo, trie.pseq, trie.seqbase, trie.legal,
                               np.ascontiguousarray(probs, dtype=np.float64), weight,
                               reach, total)
            seconds["walk"] += time.perf_counter() - start
            start = time.perf_counter()
        return trie.nodes

    sfs, asked = summed_mixtures(seats, progress, lambda p: both[p].sequences + 1, add_member)
    for total in sfs:
        total[-1] = 1.0
    return sfs, asked


def gradients(rules: PlacementRules, both: tuple[PlayerTrie, PlayerTrie], start: np.ndarray,
              sfs: list[np.ndarray]) -> tuple[list[np.ndarray], int]:
    """Each player's gradient (expected return of each of its sequences, weighted by the
    opponent's sequence form) by a walk of every history below ``start``, and how many
    histories the walk visited (``start`` included; none below a history neither player
    reaches)."""
    from psro.kernels import placement_walk as walk

    args = (rules.win, rules.cells, rules.abrupt, both[0].arrays, both[1].arrays, sfs[0],
            sfs[1])
    frontier = np.zeros((rules.cells ** FRONTIER_DEPTH * 2 ** FRONTIER_DEPTH, walk.FIELDS),
                        dtype=np.int64)
    grads = [np.zeros(len(sfs[0])), np.zeros(len(sfs[1]))]
    found, made = walk.walk(start, *args, grads[0], grads[1], FRONTIER_DEPTH, frontier)
    count = min(threads(), max(found, 1))
    lock, cursor = threading.Lock(), [0]

    def worker() -> tuple[list[np.ndarray], int]:
        own, moves = [np.zeros(len(sfs[0])), np.zeros(len(sfs[1]))], 0
        while True:
            with lock:
                i = cursor[0]
                cursor[0] += 1
            if i >= found:
                return own, moves
            moves += walk.walk(frontier[i], *args, own[0], own[1], -1, frontier[:0])[1]

    with ThreadPoolExecutor(count) as pool:
        for own, moves in pool.map(lambda _: worker(), range(count)):
            grads[0] += own[0]
            grads[1] += own[1]
            made += moves
    return grads, made + 1


def placement_sums(game, seats, ask=None, opening: tuple[int, ...] = (),
                   progress: MixtureProgress | None = None) -> KernelSums:
    """Both players' sequence-form sums of the mixtures ``seats`` in the placement game
    ``game`` below the actions ``opening``, each policy asked by ``ask(policy, batch)``
    (default :func:`psro.kernels.asking.batch_probs`; every member is first asked at one
    information set, so a policy that does not fit is refused before the long work);
    ``progress``: where an interrupted evaluation resumes."""
    from psro.kernels import placement_walk as walk
    from psro.kernels.asking import batch_probs

    ask = ask or batch_probs
    rules = PlacementRules.of(game)
    seconds = {"rules": 0.0, "tabularise": 0.0, "walk": 0.0}
    state, prefix = rules.replay(tuple(opening))
    for player, mixture in enumerate(seats):
        for policy, weight in mixture:
            if weight:
                ask(policy, first_batch(rules, player, prefix[player]))
    start = time.perf_counter()
    both = tries(rules, tuple(opening))
    state[walk.LS0], state[walk.LS1] = both[0].sequences, both[1].sequences
    seconds["rules"] = time.perf_counter() - start
    sfs, asked = sequence_forms(rules, both, seats, ask, seconds, progress)
    return KernelSums(sfs, seconds, asked, (rules, both, state))


def placement_exploitability(game, seats, ask=None, opening: tuple[int, ...] = (),
                             progress: MixtureProgress | None = None) -> KernelExploitability:
    """Exact best responses, NashConv and exploitability of the mixtures ``seats`` in the
    placement game ``game`` (below the actions ``opening``, as if the game started there),
    each policy asked by ``ask(policy, batch)`` (default
    :func:`psro.kernels.asking.batch_probs`); ``progress``: where an interrupted evaluation
    resumes (:class:`~psro.kernels.progress.MixtureProgress`)."""
    from psro.kernels import placement_walk as walk

    held = placement_sums(game, seats, ask, opening, progress)
    (rules, both, state), sfs, seconds = held.walked, held.sums, held.seconds
    start = time.perf_counter()
    grads, histories = gradients(rules, both, state, sfs)
    v0 = float(sfs[0] @ grads[0])
    best_values, best_actions = np.zeros(2), []
    for player in range(2):
        best = np.full(both[player].nodes, -1, dtype=np.int8)
        best_values[player] = walk.best_response(rules.cells, both[player].pseq,
                                                 both[player].seqbase,
                                                 both[player].legal, grads[player], best)
        best_actions.append(best)
    seconds["walk"] += time.perf_counter() - start
    values = np.array([v0, -v0])
    gains = best_values - values
    nash_conv = float(gains.sum())
    if progress is not None:
        progress.finished()
    return KernelExploitability(nash_conv, nash_conv / 2, gains, values, best_values,
                                best_actions, seconds, held.information_sets,
                                histories=histories)


def placement_cross_values(own: KernelSums, others: list[KernelSums]
                           ) -> list[tuple[float, float]]:
    """Per mixture pair of ``others`` (each from :func:`placement_sums` of the same game and
    opening as ``own``): its player 0's exact expected return against ``own``'s player 1, and
    its player 1's against ``own``'s player 0, from one walk of ``own``'s mixtures (a
    player's gradient is its expected return per sequence against the opponent's sequence
    form, so any other mixture's value against that opponent is its sequence form times the
    gradient)."""
    rules, both, state = own.walked
    start = time.perf_counter()
    grads, _ = gradients(rules, both, state, own.sums)
    own.seconds["walk"] += time.perf_counter() - start
    return [(float(other.sums[0] @ grads[0]), float(other.sums[1] @ grads[1]))
            for other in others]
