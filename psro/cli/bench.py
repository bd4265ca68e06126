"""``psro bench``: run a benchmark suite (:mod:`psro.bench`) into a folder and report it."""

from __future__ import annotations

from psro.cli.common import CliError
from psro.cli.run import check_positive


def cmd_bench(args) -> int:
    """``psro bench SUITE --out DIR``: run (or continue) the suite, then write its report."""
    from psro.bench import SUITES, get_suite, run_suite, write_suite_report

    if args.list:
        for name, suite in SUITES.items():
            games = ", ".join(g.label for g in suite.games)
            print(f"{name:9s} {suite.description} ({len(suite.seeds)} seed(s); {games})")
        return 0
    if args.suite is None:
        raise CliError("give a suite: one of " + ", ".join(SUITES) + ", or a .toml file "
                       "(--list describes them)")
    if args.out is None or not args.out.strip():
        raise CliError("--out DIR is required: the suite's folder (runs, references, report)")
    check_positive("--seeds", args.seeds)
    if args.report_only:
        given = [flag for flag, value in (("--seeds", args.seeds), ("--game", args.game),
                                          ("--method", args.method),
                                          ("--backend", args.backend),
                                          ("--workers", args.workers),
                                          ("--ray-address", args.ray_address),
                                          ("--jobs", args.jobs),
                                          ("--quiet", args.quiet or None),
                                          ("--exact-head-to-head",
                                           args.exact_head_to_head or None))
                 if value is not None]
        if given:
            raise CliError(f"{', '.join(given)} would have no effect: --report-only runs "
                           f"nothing and reports every game and seed the folder holds")
    suite = get_suite(args.suite)
    if args.seeds is not None:
        suite = suite.with_seeds(args.seeds)
    overrides = {"backend": args.backend, "workers": args.workers,
                 "ray_address": args.ray_address}
    if not args.report_only:
        run_suite(suite, args.out, {k: v for k, v in overrides.items() if v is not None},
                  quiet=args.quiet, games=args.game, jobs=_jobs(args.jobs),
                  methods=args.method)
        if args.exact_head_to_head:
            from psro.bench.exact_head_to_head import exact_suite_head_to_head

            exact_suite_head_to_head(suite, args.out, args.game, args.method,
                                     say=(lambda _: None) if args.quiet else print)
    else:
        _check_same_suite(suite.name, args.out)
    md = write_suite_report(args.out)
    print(f"wrote {md}, results.csv, results.tex and the figures in {md.parent}")
    return 0


def _jobs(text: str | None) -> int | str | None:
    """``--jobs``: a positive integer or ``auto``."""
    if text is None or text == "auto":
        return text
    try:
        jobs = int(text)
    except ValueError:
        jobs = 0
    if jobs < 1:
        raise CliError(f"--jobs must be a positive integer or auto (runs at once); got {text!r}")
    return jobs


def _check_same_suite(name: str, out: str) -> None:
    """``--report-only`` reports the suite the folder holds: refuse a folder of another
    suite than the one named (its report would pass for the named suite's)."""
    from psro.bench.folder import held_suite

    held = held_suite(out)
    if held not in (None, name):
        raise CliError(f"{out} holds suite {held!r}, not {name!r}; --report-only reports the "
                       f"suite a folder holds: name that one (or its file)")


def add_parser(sub) -> None:
    """The ``bench`` subcommand's arguments."""
    bench = sub.add_parser("bench", help="run a benchmark suite (resumable) and report it")
    bench.add_argument("suite", nargs="?", help="quick, walkable, large, full, diversity, or "
                                                "a suite TOML file")
    bench.add_argument("--out", help="the suite's folder: a run directory per (game, method, "
                                     "seed), references, head-to-head results, report/")
    bench.add_argument("--seeds", type=int, help="run seeds 0..N-1 instead of the suite's")
    bench.add_argument("--game", action="append", metavar="LABEL",
                       help="run only this game of the suite (its label or folder name; "
                            "repeat for more); the folder's report still covers every game")
    bench.add_argument("--method", action="append", metavar="LABEL",
                       help="run only this method of the games run (its label or folder name; "
                            "repeat for more); head-to-head results take in every measured "
                            "run of the game")
    bench.add_argument("--backend", help="where every run's tasks run: local, processes or ray")
    bench.add_argument("--workers", type=int, help="workers of --backend processes or ray")
    bench.add_argument("--ray-address", help="--backend ray: auto or HOST:PORT")
    bench.add_argument("--jobs", metavar="N",
                       help="run N of the suite's runs at once (each on cores of its own; with "
                            "--backend ray, as Ray tasks across the cluster); auto: as many as "
                            "there is room for")
    bench.add_argument("--report-only", action="store_true",
                       help="write the report of what DIR holds, running nothing")
    bench.add_argument("--exact-head-to-head", action="store_true",
                       help="then play the head-to-head games of the large tier's games with a "
                            "compiled kernel exactly (of --game, and the pairs of --method, "
                            "where given): hours on the board games, resumable")
    bench.add_argument("--list", action="store_true", help="describe the built-in suites")
    bench.add_argument("--quiet", action="store_true", help="no progress lines")
    bench.set_defaults(func=cmd_bench)
