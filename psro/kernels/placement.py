"""The rules of the *placement games* for the exact kernel: phantom tic-tac-toe and dark hex,
where two players place stones on a board of at most 9 cells without seeing the opponent's.

OpenSpiel's ``phantom_ttt`` and ``dark_hex`` (``obstype=reveal-nothing``): the player to move
names a cell it has not yet seen filled. An empty cell takes its stone, and the turn passes
(unless the stone wins or fills the board). A cell holding an opponent's stone is *probed*: the
player now sees that stone and moves again (``classical``, ``cdh``) or loses its turn
(``abrupt``, ``adh``). A player observes only its own actions and their outcomes, so its
information set is its sequence of ``(cell, outcome)``: the kernel numbers them in a *trie* per
player (:class:`PlayerTrie`), the same information sets as OpenSpiel's information-state tensor
(view of the board and own actions) and, in phantom tic-tac-toe, its string. Dark hex's
OpenSpiel string also shows the number of moves played (the opponent's probes included), which
its tensor does not: the kernel's information sets are the tensor's, as the IIG-RL-Benchmark's
(3,720,850 and 2,352,067 in classical dark hex 3, the counts this kernel finds).

Tic-tac-toe is won by three in a row; hex by player 0 (black, ``x``) joining the first row to
the last, player 1 (white, ``o``) the first column to the last, through neighbouring cells.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from psro.kernels.base import KernelError

VARIANTS = {"phantom_ttt": {"classical": False, "abrupt": True},
            "dark_hex": {"cdh": False, "adh": True}}
"""Per game, its ``gameversion`` values and whether each is abrupt."""
MAX_CELLS = 9
CAPACITY = 1 << 22
"""Nodes a trie is first given room for (doubled until it fits)."""
KNOWN_SIZES = {("phantom_ttt", 3, 3, False): (3_683_314, 2_307_355),
               ("phantom_ttt", 3, 3, True): (14_482_810, 8_827_459),
               ("dark_hex", 3, 3, False): (3_720_850, 2_352_067),
               ("dark_hex", 3, 3, True): (16_497_034, 10_828_243)}
"""Information sets per player of the whole games (room given at once: a walk that runs out
of room starts again with twice as much)."""


@dataclass(frozen=True)
class PlacementRules:
    """One variant: its board, whether probes pass the turn, and its win table."""

    game_name: str
    rows: int
    cols: int
    abrupt: bool
    win: np.ndarray
    """(2, 2^cells) bool: whether player p's stones (a mask) hold a winning shape."""

    @classmethod
    def of(cls, game) -> PlacementRules:
        """The rules of the pyspiel game ``game``; :class:`KernelError` for a variant the
        kernel does not implement (other observation types, boards over 9 cells)."""
        name = game.get_type().short_name
        params = game.get_parameters()
        versions = VARIANTS.get(name)
        if versions is None or params.get("gameversion") not in versions:
            raise KernelError(f"the placement kernel implements phantom_ttt (classical, abrupt) "
                              f"and dark_hex (cdh, adh); got {game}")
        if params.get("obstype") != "reveal-nothing":
            raise KernelError(f"the placement kernel implements obstype=reveal-nothing; got "
                              f"{game}")
        rows, cols = (3, 3) if name == "phantom_ttt" else \
            (int(params["num_rows"]), int(params["num_cols"]))
        if rows < 2 or cols < 2 or rows * cols > MAX_CELLS:
            raise KernelError(f"the placement kernel implements boards of 2 to {MAX_CELLS} "
                              f"cells with at least 2 rows and columns; got {rows}x{cols} "
                              f"({game})")
        win = _lines_table() if name == "phantom_ttt" else _hex_table(rows, cols)
        return cls(name, rows, cols, versions[params["gameversion"]], win)

    @property
    def cells(self) -> int:
        """Cells of the board (its actions)."""
        return self.rows * self.cols

    @property
    def key(self) -> tuple:
        """What identifies the variant (its tries are cached under it)."""
        return (self.game_name, self.rows, self.cols, self.abrupt)

    @property
    def view_size(self) -> int:
        """Length of the view in OpenSpiel's information-state tensor (3 or 9 states a cell);
        the own actions follow it."""
        return self.cells * (3 if self.game_name == "phantom_ttt" else 9)

    @property
    def tensor_size(self) -> int:
        """Length of OpenSpiel's information-state tensor: the view and one one-hot cell per
        own action."""
        return self.view_size + self.cells ** 2

    def view_index(self, player: int) -> np.ndarray:
        """(cells, 3): the tensor entry set for each cell when it is empty, holds the
        player's stone, or holds the opponent's (as the player sees it)."""
        c = np.arange(self.cells)
        if self.game_name == "phantom_ttt":  # state-major: empty 0, nought 1, cross 2
            own, other = (2, 1) if player == 0 else (1, 2)
            return np.stack([c, own * 9 + c, other * 9 + c], axis=1)
        own, other = (5, 3) if player == 0 else (3, 5)  # cell-major: black 1, white -1, +4
        return np.stack([c * 9 + 4, c * 9 + own, c * 9 + other], axis=1)

    def replay(self, opening: tuple[int, ...]) -> tuple[np.ndarray, list[list[int]]]:
        """The state row (:mod:`placement_walk` fields) after the actions ``opening`` from
        the start, and per player its moves (``2 * cell + outcome``) in it.
        :class:`KernelError` for an illegal action or an opening that ends the game."""
        from psro.kernels import placement_walk as walk

        state = np.zeros(walk.FIELDS, dtype=np.int64)
        state[walk.LN0] = state[walk.LN1] = -1
        moves: list[list[int]] = [[], []]
        full = (1 << self.cells) - 1
        for i, cell in enumerate(opening):
            p = int(state[walk.PLAYER])
            if not 0 <= cell < self.cells or state[walk.K0 + p] >> cell & 1:
                raise KernelError(f"action {cell} at move {i} of the opening {list(opening)} "
                                  f"is not legal for player {p}")
            bit = 1 << cell
            state[walk.K0 + p] |= bit
            if state[walk.S1 - p] & bit:
                moves[p].append(2 * cell + 1)
                if self.abrupt:
                    state[walk.PLAYER] = 1 - p
                continue
            moves[p].append(2 * cell)
            state[walk.S0 + p] |= bit
            state[walk.PLAYER] = 1 - p
            if self.win[p, state[walk.S0 + p]] or (state[walk.S0] | state[walk.S1]) == full:
                raise KernelError(f"the opening {list(opening)} ends the game at move {i}")
        return state, moves

    def unknown(self, moves: list[int]) -> int:
        """The cells (a mask) a player has not seen after its moves ``moves``: its legal
        cells."""
        seen = 0
        for m in moves:
            seen |= 1 << (m // 2)
        return ((1 << self.cells) - 1) & ~seen

    def info_strings(self, player: int, paths: list[list[int]]) -> list[str]:
        """OpenSpiel's information-state strings (phantom tic-tac-toe) of ``player`` after each
        of its move sequences ``paths`` (``2 * cell + outcome``)."""
        if self.game_name != "phantom_ttt":
            raise KernelError("dark hex's OpenSpiel information-state strings show the number "
                              "of moves played, which its information sets (those of the "
                              "tensor) do not; give a policy read from tensors")
        marks = ("x", "o") if player == 0 else ("o", "x")
        out = []
        for path in paths:
            view = ["."] * 9
            for m in path:
                view[m // 2] = marks[m % 2]
            rows = "\n".join("".join(view[r * 3:r * 3 + 3]) for r in range(3))
            out.append(rows + "\n" + "".join(f"{player},{m // 2} " for m in path))
        return out


def _lines_table() -> np.ndarray:
    lines = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8),
             (2, 4, 6)]
    masks = np.arange(512)
    won = np.zeros(512, dtype=bool)
    for line in lines:
        bits = sum(1 << c for c in line)
        won |= (masks & bits) == bits
    return np.stack([won, won])


def _hex_table(rows: int, cols: int) -> np.ndarray:
    cells = rows * cols

    def neighbours(c: int) -> list[int]:
        r, k = divmod(c, cols)
        steps = [(-1, 0), (-1, 1), (0, 1), (1, 0), (1, -1), (0, -1)]
        return [(r + dr) * cols + k + dk for dr, dk in steps
                if 0 <= r + dr < rows and 0 <= k + dk < cols]

    table = np.zeros((2, 1 << cells), dtype=bool)
    for mask in range(1 << cells):
        for p in range(2):
            start = [c for c in range(cells) if mask >> c & 1 and (c < cols if p == 0
                                                                  else c % cols == 0)]
            seen, todo = set(start), list(start)
            while todo:
                for n in neighbours(todo.pop()):
                    if mask >> n & 1 and n not in seen:
                        seen.add(n)
                        todo.append(n)
            table[p, mask] = any(c >= cells - cols if p == 0 else c % cols == cols - 1
                                 for c in seen)
    return table


@dataclass(frozen=True)
class PlayerTrie:
    """A player's information sets below an opening, numbered breadth first (see
    :mod:`psro.kernels.placement_walk`): per node ``parent``, ``move`` into it (``2 * cell +
    outcome``; -1 at the root), ``legal`` cells (a mask), ``childbase``, ``childmask``,
    ``seqbase``, ``pseq``; ``prefix``, the player's moves in the opening."""

    parent: np.ndarray
    move: np.ndarray
    legal: np.ndarray
    childbase: np.ndarray
    childmask: np.ndarray
    seqbase: np.ndarray
    pseq: np.ndarray
    prefix: tuple[int, ...]

    @property
    def nodes(self) -> int:
        """Information sets (decision nodes) of the player."""
        return len(self.parent)

    @property
    def sequences(self) -> int:
        """Sequences, the empty one not counted (it is the last entry of a sequence array)."""
        return int(self.seqbase[-1])

    @property
    def arrays(self) -> tuple:
        """What :func:`placement_walk.walk` takes."""
        return (self.childbase, self.childmask, self.seqbase, self.legal)

    def paths(self, lo: int, hi: int) -> list[list[int]]:
        """The move sequence (opening's moves first) to each node ``lo`` to ``hi - 1``."""
        out = []
        for n in range(lo, hi):
            path = []
            while self.parent[n] >= 0:
                path.append(int(self.move[n]))
                n = int(self.parent[n])
            out.append(list(self.prefix) + path[::-1])
        return out

    def tensors(self, rules: PlacementRules, player: int, lo: int, hi: int) -> np.ndarray:
        """OpenSpiel's information-state tensors (float32, (hi - lo, tensor size)) of the
        nodes ``lo`` to ``hi - 1``."""
        from psro.kernels import placement_trie

        out = np.zeros((hi - lo, rules.tensor_size), dtype=np.float32)
        prefix = np.array(self.prefix, dtype=np.int64)
        placement_trie.fill_tensors(self.parent, self.move, lo, prefix,
                          rules.view_index(player), rules.view_size, out)
        return out

    def legal_mask(self, cells: int, lo: int, hi: int) -> np.ndarray:
        """(hi - lo, cells) bool: the legal cells of the nodes ``lo`` to ``hi - 1``."""
        return ((self.legal[lo:hi, None].astype(np.int64) >> np.arange(cells)) & 1).astype(bool)


_CACHE: dict = {}


def tries(rules: PlacementRules, opening: tuple[int, ...] = ()) -> tuple[PlayerTrie, PlayerTrie]:
    """Both players' tries below ``opening`` (the last two asked for are kept: they depend on
    the rules only). :class:`KernelError` where a player has no decision left."""
    key = (rules.key, tuple(opening))
    if key in _CACHE:
        return _CACHE[key]
    start, prefix = rules.replay(opening)
    with ThreadPoolExecutor(2) as pool:  # numba releases the GIL: one player a core
        out = list(pool.map(lambda who: _trie(rules, start, who, tuple(prefix[who]),
                                              not opening), range(2)))
    while len(_CACHE) >= 2:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (out[0], out[1])
    return _CACHE[key]


def _trie(rules: PlacementRules, start: np.ndarray, who: int, prefix: tuple[int, ...],
          whole: bool) -> PlayerTrie:
    from psro.kernels import placement_trie
    from psro.kernels import placement_walk as walk

    capacity = KNOWN_SIZES.get(rules.key, (CAPACITY, CAPACITY))[who] if whole else 1 << 16
    while True:
        child = np.full(capacity * 2 * rules.cells, -1, dtype=np.int32)
        parent = np.empty(capacity, dtype=np.int32)
        move = np.empty(capacity, dtype=np.int8)
        legal = np.empty(capacity, dtype=np.int16)
        nodes = walk.discover(start, who, rules.win, rules.cells, rules.abrupt, child, parent,
                              move, legal)
        if nodes >= 0:
            break
        capacity *= 2
    if nodes == 0:
        raise KernelError(f"player {who} has no decision after the opening")
    arrays = placement_trie.compact(child, parent, move, legal, nodes, rules.cells)
    return PlayerTrie(*arrays, prefix=prefix)
