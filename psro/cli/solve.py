"""``psro solve``: solve a normal-form game read from a file with any registered solver."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from psro.cli.common import CliError, options
from psro.storage.text_files import read_text

MAGIC = {".npy": (b"\x93NUMPY", "numpy.save writes them"),
         ".npz": (b"PK", "a zip archive of .npy arrays, as numpy.savez writes it")}
"""The bytes numpy's files begin with (anything else made numpy speak of pickled data)."""


def _read_payoff_file(path: str) -> list[np.ndarray] | np.ndarray:
    """A .csv or .npy matrix (the zero-sum game [A, -A]), or a .npz of one array per player
    in the order they were saved (``numpy.savez(f, A, B)``: player 0's ``A``, then ``B``)."""
    file = Path(path)
    if not file.is_file():
        what = "is not a file" if file.exists() else "does not exist"
        raise CliError(f"payoff file {path} {what}")
    suffix = file.suffix.lower()
    try:
        if suffix == ".csv":
            try:
                text = read_text(file)
            except ValueError as err:
                raise CliError(f"payoff file {path} cannot be read: {err}") from None
            rows = [line for line in text.splitlines() if line.strip()]
            cells = [[c.strip() for c in line.split(",")] for line in rows]
            widths = {len(r) for r in cells}
            if len(cells) > MAX_STRATEGIES or max(widths, default=0) > MAX_STRATEGIES:
                raise CliError(f"{path}: a {len(cells):,} x {max(widths):,} matrix is larger "
                               f"than psro solve takes (at most {MAX_STRATEGIES:,} strategies "
                               f"per player); solve it from Python with solvers.get(name)"
                               f"(payoffs), which has no limit")
            if len(widths) > 1:
                raise CliError(f"{path}: rows have different numbers of columns "
                               f"({sorted(widths)}); a payoff matrix must be rectangular")
            try:
                return np.array([[float(c) for c in r] for r in cells])
            except ValueError as err:
                raise CliError(f"{path}: not a matrix of numbers ({err})") from None
        if suffix in MAGIC:
            with open(file, "rb") as handle:
                if handle.read(len(MAGIC[suffix][0])) != MAGIC[suffix][0]:
                    raise CliError(f"{path}: not a {suffix} file ({MAGIC[suffix][1]})")
        if suffix == ".npy":
            with open(file, "rb") as handle:
                _check_header(path, handle)
            return np.load(file, allow_pickle=False)
        if suffix == ".npz":
            with zipfile.ZipFile(file) as archive:
                for member in archive.namelist():
                    with archive.open(member) as handle:
                        _check_header(f"{path} ({member})", handle)
            with np.load(file, allow_pickle=False) as data:
                if not data.files:
                    raise CliError(f"{path}: the .npz holds no arrays")
                arrays = [data[k] for k in data.files]
            if len(arrays) == 1:
                return arrays[0]  # one array: a zero-sum matrix, as a .npy
            wrong = next((a for a in arrays if a.ndim != len(arrays)), None)
            if wrong is not None:
                raise CliError(f"{path}: the .npz holds {len(arrays)} arrays, so each must have "
                               f"{len(arrays)} axes (one per player); one has shape "
                               f"{wrong.shape}")
            return arrays
    except CliError:
        raise
    except Exception as err:
        raise CliError(f"{path}: cannot read payoffs ({type(err).__name__}: {err})") from None
    raise CliError(f"{path}: unsupported payoff file type {suffix!r}; accepted: .csv, .npy "
                   f"(a zero-sum matrix) or .npz (one array per player)")


def _check_header(path: str, handle) -> None:
    """Read an array's ``.npy`` header (not its data) and refuse, before anything is
    allocated, a shape with an axis over :data:`MAX_STRATEGIES` or over
    :data:`MAX_ENTRIES` entries (a 64-byte file may claim a shape of a million by a million)."""
    version = np.lib.format.read_magic(handle)
    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
        np.lib.format.read_array_header_2_0
    shape, _, _ = read(handle)
    entries = int(np.prod(shape, dtype=object)) if shape else 1
    if any(n > MAX_STRATEGIES for n in shape) or entries > MAX_ENTRIES:
        raise CliError(f"{path}: an array of shape {shape} is larger than psro solve takes (at "
                       f"most {MAX_STRATEGIES:,} strategies per player and {MAX_ENTRIES:,} "
                       f"entries an array); solve it from Python with solvers.get(name)"
                       f"(payoffs), which has no limit")


MAX_ENTRIES = 4_000_000
"""Most entries of one payoff array ``psro solve`` reads (32 MB of float64)."""
MAX_STRATEGIES = 2_000
"""Most strategies per player ``psro solve`` takes (the LP of a dense 2,000 x 2,000 zero-sum
game takes about a minute on two cores; larger ones grow as the cube)."""


def cmd_solve(args) -> int:
    """``psro solve``: solve a normal-form game from a file."""
    import solvers

    payoffs = _read_payoff_file(args.file)
    given = options(args.option, "--option") or {}
    game = solvers.as_payoffs(payoffs)
    if max(game[0].shape) > MAX_STRATEGIES:
        shape = " x ".join(f"{n:,}" for n in game[0].shape)
        raise CliError(f"{args.file}: a {shape} game is larger than psro solve takes (at most "
                       f"{MAX_STRATEGIES:,} strategies per player); solve it from Python with "
                       f"solvers.get({args.solver!r})(payoffs), which has no limit")
    solver = solvers.get(args.solver, **given)
    mixtures = solver(game)
    for p, mix in enumerate(mixtures):  # in full, however many strategies
        text = np.array2string(mix, separator=", ", precision=6, suppress_small=True,
                               threshold=mix.size + 1, max_line_width=100)
        print(f"player {p} mixture: {text}")
    values = solvers.expected_payoffs(game, mixtures)
    print("values: " + ", ".join(f"player {p} {v:.9g}" for p, v in enumerate(values)))
    print(f"NashConv: {solvers.nash_conv(game, mixtures):.3g}")
    return 0


def add_parser(sub) -> None:
    """The ``solve`` subcommand's arguments."""
    solve = sub.add_parser("solve", help="solve a normal-form game from a file")
    solve.add_argument("file", help=".csv or .npy matrix (zero-sum), or .npz (one array per "
                                    "player, in the order saved)")
    solve.add_argument("--solver", default="nash", help="meta-solver name (default nash)")
    solve.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="solver option, repeatable")
    solve.set_defaults(func=cmd_solve)
