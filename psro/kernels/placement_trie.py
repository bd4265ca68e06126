"""Compiled helpers of the placement games' tries (numba code only): renumbering a trie
breadth first, OpenSpiel's information-state tensors of its nodes, and replaying a history
through it (the rules check). The state layout is :mod:`psro.kernels.placement_walk`'s."""

from __future__ import annotations

import numpy as np
from numba import njit

from psro.kernels.placement_walk import (
    FIELDS,
    K0,
    LAST,
    LN0,
    NODE,
    PLAYER,
    S0,
    S1,
    _child,
    _popcount,
    _seq,
    _step,
)


@njit(cache=True, nogil=True)
def compact(child: np.ndarray, parent: np.ndarray, move: np.ndarray, legal: np.ndarray,
            nodes: int, cells: int):
    """The trie of :func:`discover` renumbered breadth first: per node (new numbering)
    ``parent``, ``move``, ``legal``, ``childbase``, ``childmask``, ``seqbase`` (nodes + 1
    entries) and ``pseq`` (the sequence that leads to it; the empty one for the root)."""
    stride = 2 * cells
    order = np.empty(nodes, dtype=np.int64)
    new = np.empty(nodes, dtype=np.int64)
    order[0], new[0] = 0, 0
    head, tail = 0, 1
    while head < tail:
        old = order[head]
        head += 1
        for slot in range(stride):
            c = child[old * stride + slot]
            if c >= 0:
                order[tail] = c
                new[c] = tail
                tail += 1
    out_parent = np.empty(nodes, dtype=np.int32)
    out_move = np.empty(nodes, dtype=np.int8)
    out_legal = np.empty(nodes, dtype=np.int16)
    childbase = np.zeros(nodes, dtype=np.int32)
    childmask = np.zeros(nodes, dtype=np.int32)
    seqbase = np.zeros(nodes + 1, dtype=np.int64)
    for n in range(nodes):
        old = order[n]
        out_parent[n] = -1 if parent[old] < 0 else new[parent[old]]
        out_move[n] = move[old]
        out_legal[n] = legal[old]
        seqbase[n + 1] = seqbase[n] + _popcount(legal[old])
        first = -1
        for slot in range(stride):
            c = child[old * stride + slot]
            if c >= 0:
                childmask[n] |= 1 << slot
                if first < 0:
                    first = new[c]
        childbase[n] = max(first, 0)
    pseq = np.empty(nodes, dtype=np.int64)
    for n in range(nodes):
        par = out_parent[n]
        pseq[n] = seqbase[nodes] if par < 0 else _seq(seqbase, out_legal, par,
                                                      out_move[n] // 2)
    return out_parent, out_move, out_legal, childbase, childmask, seqbase, pseq


@njit(cache=True, nogil=True)
def fill_tensors(parent: np.ndarray, move: np.ndarray, lo: int, prefix: np.ndarray,
                 view_index: np.ndarray, offset: int, out: np.ndarray) -> None:
    """OpenSpiel's information-state tensors of the nodes from ``lo`` on, one a row of ``out``
    (zeros): the view (``view_index[cell, k]``, k 0 empty, 1 own stone, 2 the opponent's) and
    one one-hot cell per own move from ``offset`` (the opening's ``prefix`` moves first)."""
    cells = view_index.shape[0]
    path = np.empty(2 * cells + 1, dtype=np.int64)
    seen = np.empty(cells, dtype=np.int64)
    for i in range(len(out)):
        n, depth = lo + i, 0
        while parent[n] >= 0:
            path[depth] = move[n]
            depth += 1
            n = parent[n]
        seen[:] = 0
        j = 0
        for k in range(len(prefix) + depth):
            m = prefix[k] if k < len(prefix) else path[depth - 1 - (k - len(prefix))]
            seen[m // 2] = 1 + m % 2
            out[i, offset + j * cells + m // 2] = 1.0
            j += 1
        for c in range(cells):
            out[i, view_index[c, seen[c]]] = 1.0


@njit(cache=True, nogil=True)
def play(start: np.ndarray, actions: np.ndarray, win: np.ndarray, cells: int, abrupt: bool,
         trie0: tuple, trie1: tuple, out: np.ndarray) -> int:
    """Replay the history ``actions`` from ``start``: per step, into ``out`` (len(actions) + 1,
    4): the player to move, its decision node, its legal cells (a mask) and, after the last
    step, the winner (0, 1; 2 a draw; -1 not ended). Returns the number of steps played before
    the game ended (len(actions) when it did not end early)."""
    full = (np.int64(1) << cells) - 1
    stack = np.zeros((2, FIELDS + 2), dtype=np.int64)
    stack[0, :FIELDS] = start
    tries = (trie0, trie1)
    for i in range(len(actions) + 1):
        st = stack[0]
        p = st[PLAYER]
        at = LN0 + LAST * p
        base, mask, seqbase, legal = tries[0] if p == 0 else tries[1]
        node = 0 if st[at] < 0 else _child(base, mask, st[at], 2 * st[at + 1] + st[at + 2])
        st[NODE] = node
        out[i, 0], out[i, 1], out[i, 2], out[i, 3] = p, node, full & ~st[K0 + p], -1
        if i == len(actions):
            return i
        cell = actions[i]
        if _step(stack, 0, cell, _seq(seqbase, legal, node, cell), abrupt) == 0:
            placed = stack[1, S0 + p]
            if win[p, placed] or (placed | stack[1, S1 - p]) == full:
                out[i + 1, 0], out[i + 1, 1], out[i + 1, 2] = -1, -1, 0
                out[i + 1, 3] = p if win[p, placed] else 2
                return i + 1
        stack[0, :FIELDS] = stack[1, :FIELDS]
    return len(actions)
