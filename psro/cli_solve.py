"""``psro solve``: solve a normal-form game read from a file with any registered solver."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from psro.cli import CliError, _options


def _read_payoff_file(path: str) -> list[np.ndarray] | np.ndarray:
    file = Path(path)
    if not file.is_file():
        raise CliError(f"payoff file {path} does not exist")
    suffix = file.suffix.lower()
    try:
        if suffix == ".csv":
            rows = [line for line in file.read_text().splitlines() if line.strip()]
            cells = [[c.strip() for c in line.split(",")] for line in rows]
            widths = {len(r) for r in cells}
            if len(widths) > 1:
                raise CliError(f"{path}: rows have different numbers of columns "
                               f"({sorted(widths)}); a payoff matrix must be rectangular")
            try:
                return np.array([[float(c) for c in r] for r in cells])
            except ValueError as err:
                raise CliError(f"{path}: not a matrix of numbers ({err})") from None
        if suffix == ".npy":
            return np.load(file, allow_pickle=False)
        if suffix == ".npz":
            with np.load(file, allow_pickle=False) as data:
                if not data.files:
                    raise CliError(f"{path}: the .npz holds no arrays")
                return [data[k] for k in data.files]
    except CliError:
        raise
    except Exception as err:
        raise CliError(f"{path}: cannot read payoffs ({type(err).__name__}: {err})") from None
    raise CliError(f"{path}: unsupported payoff file type {suffix!r}; accepted: .csv, .npy "
                   f"(a zero-sum matrix) or .npz (one array per player)")


def cmd_solve(args) -> int:
    """``psro solve``: solve a normal-form game from a file."""
    import solvers

    payoffs = _read_payoff_file(args.file)
    options = _options(args.option, "--option") or {}
    game = solvers.as_payoffs(payoffs)
    solver = solvers.get(args.solver, **options)
    mixtures = solver(game)
    np.set_printoptions(precision=6, suppress=True)
    for p, mix in enumerate(mixtures):
        print(f"player {p} mixture: {np.array2string(mix, separator=', ')}")
    values = solvers.expected_payoffs(game, mixtures)
    print("values: " + ", ".join(f"player {p} {v:.9g}" for p, v in enumerate(values)))
    print(f"NashConv: {solvers.nash_conv(game, mixtures):.3g}")
    return 0


def add_parser(sub) -> None:
    """The ``solve`` subcommand's arguments."""
    solve = sub.add_parser("solve", help="solve a normal-form game from a file")
    solve.add_argument("file", help=".csv or .npy matrix (zero-sum), or .npz (one per player)")
    solve.add_argument("--solver", default="nash", help="meta-solver name (default nash)")
    solve.add_argument("--option", action="append", metavar="KEY=VALUE",
                       help="solver option, repeatable")
    solve.set_defaults(func=cmd_solve)
