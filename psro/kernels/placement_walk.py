"""The compiled walks of the placement games (phantom tic-tac-toe, dark hex): numba code only,
imported when an evaluation runs (:mod:`psro.kernels.placement` holds the rules and the driver).

A history's state is one row of int64 fields: the two players' stone masks (bit ``c`` is cell
``c``), the cells each player knows (its stones and the opponent's stones it has probed), the
player to move, and per player its last action: the decision node where it acted (a node of its
*trie*, the tree of its own observations, whose nodes are its information sets), the cell, the
outcome (0: the stone was placed; 1: the cell held an opponent's stone) and the sequence's
index. Before a player's first action its node is -1 and its sequence the empty one.

A trie of ``N`` nodes over ``C`` cells is numbered breadth first, children of a node in the
order of their ``2 * cell + outcome``, so that its children are ``childbase[n] + k`` for the set
bits of ``childmask[n]``. Its sequences (a legal cell at a node) are numbered
``seqbase[n] + k`` for the set bits of ``legal[n]``; ``seqbase[N]`` is the empty sequence.
"""

from __future__ import annotations

import numpy as np
from numba import njit

(S0, S1, K0, K1, PLAYER, LN0, LC0, LO0, LS0, LN1, LC1, LO1, LS1) = range(13)
FIELDS = 13
"""Fields of a state (:data:`S0` ...); a stack row adds the acting node and the cells left."""
NODE, REST = FIELDS, FIELDS + 1
LAST = 4
"""Fields per player's last action (node, cell, outcome, sequence); player p's start at
``LN0 + LAST * p``."""


@njit(cache=True, inline="always")
def _lowest(mask: int) -> int:
    c = 0
    while not (mask >> c) & 1:
        c += 1
    return c


@njit(cache=True, inline="always")
def _popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit(cache=True, inline="always")
def _child(base: np.ndarray, mask: np.ndarray, node: int, slot: int) -> int:
    m = mask[node]
    if not (m >> slot) & 1:
        return -1
    return base[node] + _popcount(m & ((1 << slot) - 1))


@njit(cache=True, inline="always")
def _seq(seqbase: np.ndarray, legal: np.ndarray, node: int, cell: int) -> int:
    return seqbase[node] + _popcount(legal[node] & ((1 << cell) - 1))


@njit(cache=True, inline="always")
def _step(stack: np.ndarray, d: int, cell: int, seq: int, abrupt: bool) -> int:
    """Play ``cell`` (sequence ``seq``) from the state at depth ``d`` into depth ``d + 1``:
    1 for a probe that found an opponent's stone, 0 for a placed stone (the caller checks
    whether the game ended)."""
    for f in range(FIELDS):
        stack[d + 1, f] = stack[d, f]
    p = stack[d, PLAYER]
    bit = np.int64(1) << cell
    at = LN0 + LAST * p
    stack[d + 1, at] = stack[d, NODE]
    stack[d + 1, at + 1] = cell
    stack[d + 1, at + 3] = seq
    stack[d + 1, K0 + p] |= bit
    if stack[d, S1 - p] & bit:
        stack[d + 1, at + 2] = 1
        if abrupt:
            stack[d + 1, PLAYER] = 1 - p
        return 1
    stack[d + 1, at + 2] = 0
    stack[d + 1, S0 + p] |= bit
    stack[d + 1, PLAYER] = 1 - p
    return 0


@njit(cache=True, nogil=True)
def discover(start: np.ndarray, who: int, win: np.ndarray, cells: int, abrupt: bool,
             child: np.ndarray, parent: np.ndarray, move: np.ndarray, legal: np.ndarray) -> int:
    """Number the decision nodes of player ``who`` reachable from ``start`` in the order a
    depth-first walk first meets them, filling a dense trie (``child[n * 2C + slot]``, and per
    node its ``parent``, the ``move = 2 * cell + outcome`` into it, its ``legal`` cells). The
    opponent's probes are walked only where ``who`` can tell them apart: not at all in the
    classical rules (a probe changes nothing ``who`` observes, and the prober moves again), one
    probe standing for all in the abrupt rules (it passes the turn; which of ``who``'s hidden
    stones it found changes nothing ``who`` observes). Returns the number of nodes, or -1 where
    more than ``len(parent)`` would be needed."""
    full = (np.int64(1) << cells) - 1
    stride = 2 * cells
    stack = np.zeros((2 * cells + 2, FIELDS + 2), dtype=np.int64)
    stack[0, :FIELDS] = start
    nodes, d, enter = 0, 0, True
    at = LN0 + LAST * who
    while d >= 0:
        if enter:
            enter = False
            p = stack[d, PLAYER]
            if p == who:
                last = stack[d, at]
                slot = -1 if last < 0 else last * stride + 2 * stack[d, at + 1] + \
                    stack[d, at + 2]
                if slot < 0:
                    node = 0 if nodes > 0 else -1
                else:
                    node = child[slot]
                if node < 0:
                    if nodes == len(parent):
                        return -1
                    node = nodes
                    nodes += 1
                    parent[node] = last
                    move[node] = -1 if slot < 0 else slot - last * stride
                    legal[node] = full & ~stack[d, K0 + p]
                    if slot >= 0:
                        child[slot] = node
                stack[d, NODE] = node
                stack[d, REST] = full & ~stack[d, K0 + p]
            else:
                stack[d, NODE] = -1
                rest = full & ~(stack[d, S0] | stack[d, S1])
                hidden = stack[d, S0 + who] & ~stack[d, K0 + p]
                if abrupt and hidden:
                    rest |= hidden & -hidden
                stack[d, REST] = rest
        rest = stack[d, REST]
        if rest == 0:
            d -= 1
            continue
        cell = _lowest(rest)
        stack[d, REST] = rest & (rest - 1)
        if _step(stack, d, cell, 0, abrupt) == 0:
            p = stack[d, PLAYER]
            placed = stack[d + 1, S0 + p]
            if win[p, placed] or (placed | stack[d + 1, S1 - p]) == full:
                continue
        d += 1
        enter = True
    return nodes


@njit(cache=True, nogil=True)
def sequence_form(lo: int, pseq: np.ndarray, seqbase: np.ndarray, legal: np.ndarray,
                  probs: np.ndarray, weight: float, reach: np.ndarray,
                  out: np.ndarray) -> None:
    """For the nodes ``lo`` to ``lo + len(probs) - 1`` (parents before children): ``reach`` (one
    entry a sequence, the empty one 1) becomes the sequence form of the behavioural policy
    ``probs`` (its rows those nodes' action probabilities over the C cells), and ``weight``
    times it is added to ``out``."""
    cells = probs.shape[1]
    for i in range(len(probs)):
        n = lo + i
        r = reach[pseq[n]]
        s = seqbase[n]
        for c in range(cells):
            if (legal[n] >> c) & 1:
                reach[s] = r * probs[i, c]
                out[s] += weight * reach[s]
                s += 1


@njit(cache=True, inline="always")
def _decision(st: np.ndarray, base: np.ndarray, mask: np.ndarray) -> int:
    """The decision node of the player to move in the state row ``st``."""
    at = LN0 + LAST * st[PLAYER]
    if st[at] < 0:
        return 0
    return _child(base, mask, st[at], 2 * st[at + 1] + st[at + 2])


@njit(cache=True, inline="always")
def _won(seq: int, other: int, sf: np.ndarray, sf_other: np.ndarray, g: np.ndarray,
         g_other: np.ndarray) -> None:
    """The winner's last sequence ``seq`` gains the loser's reach; the loser's ``other``
    loses the winner's."""
    g[seq] += sf_other[other]
    g_other[other] -= sf[seq]


@njit(cache=True, nogil=True)
def walk(start: np.ndarray, win: np.ndarray, cells: int, abrupt: bool,
         trie0: tuple, trie1: tuple, sf0: np.ndarray, sf1: np.ndarray, g0: np.ndarray,
         g1: np.ndarray, limit: int, frontier: np.ndarray) -> tuple[int, int]:
    """Walk every history below ``start`` (a state row) and add, at each won terminal
    history, +1 to the winner's and -1 to the loser's gradient (``g0``, ``g1``: per own
    sequence, its expected return with the opponent's sequence-form probability ``sf0``,
    ``sf1`` as weight) at its last sequence. A trie is ``(childbase, childmask, seqbase,
    legal)``. Subtrees neither player reaches are skipped. With ``limit >= 0`` the walk stops
    at that depth and writes the states there to ``frontier``. Returns how many (-1 where it
    has no room) and how many histories the walk made (its moves, the frontier's included)."""
    full = (np.int64(1) << cells) - 1
    base0, mask0, seqbase0, legal0 = trie0
    base1, mask1, seqbase1, legal1 = trie1
    stack = np.zeros((2 * cells + 2, FIELDS + 2), dtype=np.int64)
    stack[0, :FIELDS] = start
    found, made, d, enter = 0, 0, 0, True
    while d >= 0:
        st = stack[d]
        if enter:
            enter = False
            if sf0[st[LS0]] == 0.0 and sf1[st[LS1]] == 0.0:
                d -= 1
                continue
            if d == limit:
                if found == len(frontier):
                    return -1, made
                frontier[found] = st[:FIELDS]
                found += 1
                d -= 1
                continue
            p = st[PLAYER]
            st[NODE] = _decision(st, base0, mask0) if p == 0 else _decision(st, base1, mask1)
            st[REST] = full & ~st[K0 + p]
        rest = st[REST]
        if rest == 0:
            d -= 1
            continue
        cell = _lowest(rest)
        st[REST] = rest & (rest - 1)
        p = st[PLAYER]
        if p == 0:
            seq = _seq(seqbase0, legal0, st[NODE], cell)
        else:
            seq = _seq(seqbase1, legal1, st[NODE], cell)
        made += 1
        if _step(stack, d, cell, seq, abrupt) == 0:
            nxt = stack[d + 1]
            placed = nxt[S0 + p]
            if win[p, placed]:
                if p == 0:
                    _won(seq, nxt[LS1], sf0, sf1, g0, g1)
                else:
                    _won(seq, nxt[LS0], sf1, sf0, g1, g0)
                continue
            if (placed | nxt[S1 - p]) == full:
                continue
        d += 1
        enter = True
    return found, made


@njit(cache=True)
def best_response(cells: int, pseq: np.ndarray, seqbase: np.ndarray, legal: np.ndarray,
                  grad: np.ndarray, best: np.ndarray) -> float:
    """The best response to the gradient ``grad`` (one entry a sequence, summed in place from
    the leaves up): at each node, from the last to the first, the legal cell of highest value
    (the lowest cell among equals) goes to ``best`` and its value to the sequence that leads
    to the node. Returns the best response's value (the empty sequence's)."""
    for n in range(len(pseq) - 1, -1, -1):
        top, arg, s = -np.inf, -1, seqbase[n]
        for c in range(cells):
            if (legal[n] >> c) & 1:
                if grad[s] > top:
                    top, arg = grad[s], c
                s += 1
        best[n] = arg
        grad[pseq[n]] += top
    return grad[len(grad) - 1]
