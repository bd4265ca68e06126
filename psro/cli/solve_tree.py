"""``psro solve-tree GAME``: a walkable game's equilibrium by the tabular solvers (predictive
CFR+, discounted CFR, discounted CFR+, linear CFR, CFR+, the sequence-form LP) and XDO's double
oracle, side by side, with the time and iterations each takes to every exploitability
threshold (:mod:`psro.extensive_form.tree_solvers`)."""

from __future__ import annotations

import json

from psro.cli.common import CliError


def add_parser(sub) -> None:
    """The ``solve-tree`` subcommand's arguments."""
    parser = sub.add_parser("solve-tree", help="a walkable game's equilibrium by PCFR+, DCFR, "
                                               "DCFR+, linear CFR, CFR+, the sequence-form LP "
                                               "or XDO's double oracle")
    parser.add_argument("game", help="OpenSpiel game string or catalogue name")
    parser.add_argument("--solver", action="append", metavar="NAME",
                        help="pcfr+, dcfr, dcfr+, lcfr, cfr+, lp (the LP by HiGHS's simplex), "
                             "lp_ipm (by its interior-point method), xdo, xdo_cfr, xdo_pcfr or "
                             "xdo_dcfr+ (XDO's double oracle on restricted LPs, CFR+ or PCFR+ "
                             "solves, or CFR+ ones and DCFR+ once the restricted game settles); "
                             "repeat for several, side by side (default: every one the game "
                             "allows)")
    parser.add_argument("--thresholds", default="1e-3,1e-4,1e-6",
                        help="exploitability thresholds whose crossings are timed "
                             "(comma-separated; default 1e-3,1e-4,1e-6)")
    parser.add_argument("--time-budget", type=float, default=60.0, metavar="S",
                        help="solver seconds each solver may take at most (default 60)")
    parser.add_argument("--cfr-share", type=float, default=None, metavar="X",
                        help="xdo_cfr, xdo_pcfr, xdo_dcfr+: each restricted solve runs until its "
                             "restricted NashConv is at most this share of the last NashConv "
                             "over the whole game (in (0, 1]; default 0.3)")
    parser.add_argument("--settle-growth", type=float, default=None, metavar="G",
                        help="xdo_dcfr+: its restricted game has settled, and its restricted "
                             "solves run DCFR+, once an iteration grows it by less than this "
                             "share of the game's actions (in [0, 1]; default 0.03)")
    parser.add_argument("--max-nodes", type=int, default=2_000_000,
                        help="largest tree walked (default 2,000,000)")
    parser.add_argument("--out", metavar="FILE",
                        help="also write every solver's curve and crossings to a new JSON file")
    parser.set_defaults(func=run)


def _checked(args, solvers: tuple[str, ...]) -> tuple[float, ...]:
    """The thresholds asked for, once every argument is checked (``CliError`` otherwise)."""
    thresholds = _thresholds(args.thresholds)
    if not args.time_budget > 0:
        raise CliError(f"--time-budget must be a positive number of seconds; got "
                       f"{args.time_budget:g}")
    if args.cfr_share is not None and not 0 < args.cfr_share <= 1:
        raise CliError(f"--cfr-share must be a number in (0, 1]; got {args.cfr_share:g}")
    if args.settle_growth is not None and not 0 <= args.settle_growth <= 1:
        raise CliError(f"--settle-growth must be a number in [0, 1]; got "
                       f"{args.settle_growth:g}")
    if args.max_nodes < 1:
        raise CliError(f"--max-nodes must be a positive integer; got {args.max_nodes}")
    unknown = [s for s in args.solver or () if s not in solvers]
    if unknown:
        raise CliError(f"unknown --solver {unknown[0]!r}; accepted: {', '.join(solvers)}")
    if args.out:
        from pathlib import Path

        from psro.storage.files import check_new_file

        try:
            check_new_file(Path(args.out), "--out")
        except ValueError as err:
            raise CliError(str(err)) from None
    return thresholds


def _thresholds(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        values = ()
    if not values or not all(0 < v < float("inf") for v in values):
        raise CliError(f"--thresholds must be positive numbers separated by commas; got "
                       f"{text!r}")
    return values


def run(args) -> int:
    """Walk the game, run each solver, print the crossings."""
    import time

    import psro
    from psro.extensive_form.tree_solvers import (
        TREE_SOLVERS,
        ZERO_SUM_SOLVERS,
        lp_applies,
        solve_tree,
    )

    thresholds = _checked(args, TREE_SOLVERS)
    start = time.perf_counter()
    try:
        tree = psro.game_tree(args.game, args.max_nodes)
    except psro.GameTooLargeError:
        raise CliError(f"{args.game} has more than --max-nodes {args.max_nodes:,} nodes: the "
                       f"tabular solvers need the walked tree") from None
    walk = time.perf_counter() - start
    sizes = ", ".join(f"player {p}: {tree.players[p].num_infosets:,} information sets"
                      for p in range(tree.num_players))
    print(f"{args.game}: {tree.num_nodes:,} nodes walked in {walk:.2f} s ({sizes})")
    zero_sum = lp_applies(tree)
    solvers = args.solver or [s for s in TREE_SOLVERS if s not in ZERO_SUM_SOLVERS or zero_sum]
    lp = next((s for s in solvers if s in ZERO_SUM_SOLVERS), None)
    if lp is not None and not zero_sum:
        raise CliError(f"--solver {lp} needs a two-player zero-sum game; {args.game} is not "
                       f"one (the CFR family solves any game)")
    from psro.extensive_form.compiled_cfr import load_kernels

    load_kernels()  # compiled or loaded here, not on the first solver's clock
    header = " | ".join(f"to {t:g}" for t in sorted(thresholds, reverse=True))
    print(f"solver | {header} | final exploitability | iterations | stopped")
    results = []
    options = {name: value for name, value in (("cfr_share", args.cfr_share),
                                               ("settle_growth", args.settle_growth))
               if value is not None}  # else the defaults
    for name in solvers:
        result = solve_tree(tree, name, thresholds, args.time_budget, **options)
        results.append(result)
        cells = " | ".join(_crossing(result.crossings.get(t))
                           for t in sorted(thresholds, reverse=True))
        final = f"{result.curve[-1]['exploitability']:.3g} | " \
            f"{result.curve[-1]['iterations']:,}" if result.curve else "- | 0"  # none measured
        print(f"{name} | {cells} | {final} | {result.stop_reason}", flush=True)
    if args.out:
        _write(args.out, args.game, walk, results)
        print(f"wrote {args.out}")
    return 0


def _crossing(crossing: dict | None) -> str:
    if crossing is None:
        return "-"
    return f"{crossing['seconds']:.3g} s ({crossing['iterations']:,} it)"


def _write(path: str, game: str, walk: float, results: list) -> None:
    from pathlib import Path

    from psro.storage.files import atomic_write_text

    atomic_write_text(Path(path), json.dumps({
        "game": game, "walk_s": walk,
        "solvers": [{"solver": r.solver, "stop_reason": r.stop_reason, "curve": r.curve,
                     "crossings": {f"{t:g}": c for t, c in r.crossings.items()}}
                    for r in results]}, indent=1))
