"""The ``psro`` command: ``psro run``, ``psro report``, ``psro solve``, ``psro exploitability``,
``psro games``.

Every bad input exits with status 2 and one line on stderr naming the problem; no traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing error of the command line itself: printed as one line, exit status 2."""


def _parse_option(text: str, flag: str) -> tuple[str, object]:
    """``key=value`` from ``flag``; the value becomes an int, float or bool where it reads as
    one, else stays a string."""
    if "=" not in text:
        raise CliError(f"{flag} needs key=value; got {text!r}")
    key, value = text.split("=", 1)
    for cast in (int, float):
        try:
            return key.strip(), cast(value)
        except ValueError:
            pass
    if value.lower() in ("true", "false"):
        return key.strip(), value.lower() == "true"
    return key.strip(), value


def _options(texts: list[str] | None, flag: str) -> dict | None:
    return None if not texts else dict(_parse_option(t, flag) for t in texts)


def _exploitability_text(row: dict) -> str:
    kind = row.get("exploitability_kind", "exact")
    if row.get("exploitability") is None:
        return "n/a (sampled payoffs; measured when the run stops)"
    suffix = " (approximate lower bound)" if kind == "approximate_lower_bound" else ""
    gap = f"  {row['gap_kind']} gap {row['gap']:.6g}" if "gap" in row else ""
    return f"{row['exploitability']:.6g}{suffix}{gap}"


def _overrides(args) -> dict:
    """The run settings given as flags, as RunConfig fields (None where not given)."""
    return {
        "game": args.game, "algorithm": args.algorithm, "oracle": args.oracle,
        "pipeline_width": args.pipeline_width, "anytime_rounds": args.anytime_rounds,
        "meta_solver": args.meta_solver,
        "meta_solver_options": _options(args.meta_solver_option, "--meta-solver-option"),
        "oracle_options": _options(args.oracle_option, "--oracle-option"),
        "ppo": _options(args.ppo, "--ppo"), "iterations": args.iterations, "seed": args.seed,
        "time_budget_s": args.time_budget, "target_exploitability": args.target_exploitability,
        "backend": args.backend, "workers": args.workers, "ray_address": args.ray_address,
        "tensorboard": True if args.tensorboard else None,
    }


def cmd_run(args) -> int:
    """``psro run``: a new run, or ``--resume``."""
    from psro.cli.progress import ProgressLine, announce
    from psro.config import RunConfig, run_limits
    from psro.loop import PSRO

    callbacks = () if args.quiet else (ProgressLine(),)
    limits = (args.iterations, args.time_budget, args.target_exploitability)
    if args.resume:
        if args.out is None:
            raise CliError("--resume needs --out DIR, the run directory to continue")
        fixed = {"--game": args.game, "--algorithm": args.algorithm, "--oracle": args.oracle,
                 "--pipeline-width": args.pipeline_width,
                 "--anytime-rounds": args.anytime_rounds,
                 "--meta-solver": args.meta_solver,
                 "--meta-solver-option": args.meta_solver_option,
                 "--oracle-option": args.oracle_option, "--ppo": args.ppo, "--seed": args.seed,
                 "--config": args.config, "--tensorboard": args.tensorboard or None,
                 "--overwrite": args.overwrite or None}
        given = [flag for flag, value in fixed.items() if value is not None]
        if given:
            raise CliError(f"{', '.join(given)} cannot change when a run is resumed (the run "
                           f"keeps its config); --resume takes --iterations, --time-budget, "
                           f"--target-exploitability, --backend, --workers and --ray-address")
        run = PSRO.resume(args.out, callbacks=callbacks)
        if args.backend is not None or args.workers is not None or args.ray_address:
            run.use_backend(args.backend or run.config.backend, args.workers, args.ray_address)
        print(f"resuming {args.out} at iteration {run.iteration}", flush=True)
        run.limits = run_limits(run.config, *limits)
        announce(run, args.quiet)
        run.run(*limits)
    else:
        if args.out is None:
            raise CliError("--out DIR is required: the run directory to write")
        config = RunConfig.from_toml(args.config) if args.config else RunConfig()
        config = config.merged(_overrides(args))
        if Path(args.out, "config.json").exists() and not args.overwrite:
            raise CliError(f"{args.out} already holds a run; use --resume to continue it, "
                           f"--overwrite to replace it, or choose another --out")
        if not args.out.strip():
            raise CliError("--out needs a directory name (it was empty)")
        run = PSRO(config=config, out=args.out, callbacks=callbacks, overwrite=args.overwrite)
        if run.writer.removed:
            print(f"--overwrite removed the earlier run in {args.out}: "
                  f"{', '.join(run.writer.removed)}", flush=True)
        announce(run, args.quiet)
        run.run()
    last = run.metrics[-1]
    print(f"done ({run.stop_reason}): iteration {last['iteration']}, exploitability "
          f"{_exploitability_text(last)}, run directory {args.out}")
    return 0


def _check_positive(flag: str, value) -> None:
    if value is not None and value < 1:
        raise CliError(f"{flag} must be a positive integer; got {value}")


def cmd_report(args) -> int:
    """``psro report``: reports, figures and tables for run directories."""
    from psro.reports import write_report

    out = args.out or str(Path(args.dirs[0]) / "report")
    labels = {}
    for text in args.label or []:
        directory, sep, label = text.partition("=")
        if not sep or not directory.strip() or not label.strip():
            raise CliError(f"--label needs DIR=TEXT; got {text!r}")
        labels[directory.strip()] = label.strip()
    formats = [f.strip() for text in args.format or [] for f in text.split(",") if f.strip()]
    md, html_file = write_report(args.dirs, out, labels, tuple(formats) or ("png",),
                                 per_run=args.runs)
    print(f"wrote {md}, {html_file}, table.tex, table.csv and the figures in {out}")
    return 0


def cmd_games(args) -> int:
    """``psro games``: the catalogue and OpenSpiel's registered games."""
    import pyspiel

    from games import CATALOG

    print("Normal-form catalogue (psro run --game NAME or NAME(key=value,...)):")
    for name, entry in CATALOG.items():
        params = ", ".join(f"{k}={v}" for k, v in entry.defaults.items())
        print(f"  {name:20s} {entry.summary}" + (f"  [{params}]" if params else ""))
    names = sorted(pyspiel.registered_names())
    print(f"\nOpenSpiel games ({len(names)} registered; any game string works, parameters "
          f"included, e.g. goofspiel(num_cards=4)):")
    for i in range(0, len(names), 4):
        print("  " + "".join(f"{n:32s}" for n in names[i:i + 4]).rstrip())
    return 0


def _variant_arguments(run) -> None:
    """``psro run``'s flags that pick the PSRO variant."""
    run.add_argument("--algorithm", help="PSRO variant: psro (default), anytime, rectified, "
                                         "xdo, jpsro, pipeline")
    run.add_argument("--pipeline-width", type=int, help="--algorithm pipeline: active "
                                                        "learners per player (default 2)")
    run.add_argument("--anytime-rounds", type=int, help="--algorithm anytime with --oracle "
                     "ppo: regret-matching rounds per iteration (default: exact LP where the "
                     "game is walked, 10 where it is too large)")


def build_parser() -> argparse.ArgumentParser:
    """The ``psro`` argument parser."""
    import solvers

    parser = argparse.ArgumentParser(prog="psro", description="Policy-Space Response Oracles")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run PSRO (or --resume a run)")
    run.add_argument("--game", help="OpenSpiel game string or catalogue name")
    _variant_arguments(run)
    run.add_argument("--oracle", help="exact (tabular best response), ppo, or a registered "
                                      "oracle")
    run.add_argument("--oracle-option", action="append", metavar="KEY=VALUE",
                     help="option of a registered oracle, repeatable")
    run.add_argument("--meta-solver", help=f"one of: {', '.join(solvers.names())} (default "
                                           f"nash; cce with --algorithm jpsro)")
    run.add_argument("--meta-solver-option", action="append", metavar="KEY=VALUE",
                     help="meta-solver option, repeatable (e.g. p=0.8)")
    run.add_argument("--ppo", action="append", metavar="KEY=VALUE",
                     help="PPO oracle option, repeatable (e.g. env_steps=60000); see README")
    run.add_argument("--iterations", type=int,
                     help="stop at this iteration (counting resumed ones); without it, a run "
                          "with --time-budget or --target-exploitability runs until that, and "
                          "one with no limit makes 20 iterations; the first limit reached ends "
                          "the run")
    run.add_argument("--seed", type=int, help="seed of every random source (default 0)")
    run.add_argument("--out", help="run directory to write (or resume)")
    run.add_argument("--backend", help="where tasks run: local (default), processes or ray; "
                                       "same numbers")
    run.add_argument("--workers", type=int, help="workers of --backend processes or ray")
    run.add_argument("--ray-address", help="--backend ray: auto (the cluster `ray start` made) "
                                           "or HOST:PORT (default: a private local Ray)")
    run.add_argument("--time-budget", type=float, metavar="SECONDS",
                     help="stop after this much run time (summed over resumes)")
    run.add_argument("--target-exploitability", type=float,
                     help="stop once the meta-policy's exploitability is at or below this")
    run.add_argument("--config", help="TOML file with RunConfig fields; flags override it")
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--overwrite", action="store_true",
                     help="replace an earlier run in --out (a directory holding anything "
                          "else is still refused)")
    run.add_argument("--quiet", action="store_true",
                     help="no progress lines (the run directory records everything)")
    run.add_argument("--tensorboard", action="store_true",
                     help="also write TensorBoard scalars under OUT/tensorboard")
    run.set_defaults(func=cmd_run)
    _report_parser(sub)
    from psro.cli import exploitability as cli_exploitability
    from psro.cli import solve as cli_solve

    cli_solve.add_parser(sub)
    cli_exploitability.add_parser(sub)
    games = sub.add_parser("games", help="list the games")
    games.set_defaults(func=cmd_games)
    return parser


def _report_parser(sub) -> None:
    """The ``report`` subcommand's arguments."""
    report = sub.add_parser("report", help="write report.md, report.html, figures and "
                                           "tables for runs")
    report.add_argument("dirs", nargs="+", help="run directories; runs differing only in "
                                                "the seed are aggregated")
    report.add_argument("--out", help="output folder (default: DIR/report of the first run)")
    report.add_argument("--label", action="append", metavar="DIR=TEXT",
                        help="label of DIR's group in figures and tables, repeatable")
    report.add_argument("--format", action="append", metavar="FMT",
                        help="figure formats: png (always written), pdf, svg; repeatable or "
                             "comma-separated")
    report.add_argument("--runs", action=argparse.BooleanOptionalAction, default=None,
                        help="a section per run with its meta-strategies, payoff table and "
                             "ratings (default: for reports of up to 4 runs)")
    report.set_defaults(func=cmd_report)


_HINTS = {"GameTooLargeError": "; use --oracle ppo (sampled payoffs and approximate "
                                "exploitability)",
          "GameError": " (`psro games` lists the games)"}


class Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds the command like Ctrl-C, so that its ``finally``
    blocks stop the worker processes and release the run directory."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _terminate(signum, frame) -> None:
    raise Terminated(signum)


def main(argv: list[str] | None = None) -> int:
    """Run the ``psro`` command; returns the exit status. The toolkit's own errors
    (``ToolkitError``) and command-line errors print one line and exit with status 2; anything
    else is a bug and shows its traceback. Ctrl-C (130), SIGTERM (143) and SIGHUP (129) stop
    the command with the last saved iteration kept and its workers stopped."""
    import signal

    from solvers import ToolkitError

    parser = build_parser()
    args = parser.parse_args(argv)
    handled = (signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {sig: signal.signal(sig, _terminate) for sig in handled}
    except ValueError:  # not the main thread: leave signals to the caller
        previous = {}
    try:
        if args.command == "run":
            _check_positive("--iterations", args.iterations)
        return args.func(args)
    except (CliError, ToolkitError) as err:
        hint = _HINTS.get(type(err).__name__, "")
        print(f"psro {args.command}: error: {err}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as err:  # the file system refused a path the user gave (too long, ...)
        where = f" ({err.filename})" if err.filename else ""
        print(f"psro {args.command}: error: {err.strerror or err}{where}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"psro {args.command}: interrupted; the last checkpoint is kept", file=sys.stderr)
        return 130
    except Terminated as stop:
        name = signal.Signals(stop.signum).name
        print(f"psro {args.command}: stopped by {name}; the last checkpoint is kept",
              file=sys.stderr)
        return 128 + stop.signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

