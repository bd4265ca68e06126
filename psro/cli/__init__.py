"""The ``psro`` command: ``psro run``, ``psro report``, ``psro solve``, ``psro solve-tree``,
``psro exploitability``, ``psro games``, ``psro bench``, ``psro judge``.

Every bad input exits with status 2 and one line on stderr naming the problem; no traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import NoReturn

from psro.backends.threads import one_blas_thread
from psro.cli import bench, exploitability, games, judge, report, run, solve, solve_tree
from psro.cli.common import EXIT_USAGE, CliError
from psro.cli.run import check_positive

NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
"""What argparse takes for a negative number rather than an option (its own pattern, ``-1``
and ``-0.5``, with an exponent allowed)."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr and exit status 2, naming the
    problem and pointing to ``--help`` for what is accepted, instead of argparse's usage block
    (its subcommands' parsers are of this class too). A negative number in scientific notation
    (``--target-exploitability -1e-3``) is read as an option's value, as argparse reads ``-1``
    and ``-0.5``, so that the option's own check names what is wrong with it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> NoReturn:
        """Print ``message`` as one line and exit with status 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; `{self.prog} --help` lists "
                              f"what is accepted\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``psro`` argument parser: one subcommand per module of this package."""
    parser = OneLineParser(prog="psro", description="Policy-Space Response Oracles")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in (run, report, solve, solve_tree, exploitability, games, bench, judge):
        command.add_parser(sub)
    return parser


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


def _parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """``parser.parse_args``, with arguments that no option takes refused by the subcommand's
    parser (``psro run: error: ...; `psro run --help` ...``), not the top-level one."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        commands = next(action.choices for action in parser._actions
                        if isinstance(action, argparse._SubParsersAction))
        commands.get(args.command, parser).error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the ``psro`` command; returns the exit status. The toolkit's own errors
    (``ToolkitError``) and command-line errors print one line and exit with status 2; anything
    else is a bug and shows its traceback. Ctrl-C (130), SIGTERM (143) and SIGHUP (129) stop
    the command with the last saved iteration kept and its workers stopped; a closed output
    pipe (``psro games | head``) stops it quietly with 141."""
    import signal

    from solvers import ToolkitError

    parser = build_parser()
    try:
        args = _parse(parser, argv)
    except SystemExit as stop:  # --help (0), or a bad argument (2, its one line printed)
        return int(stop.code or 0)
    handled = (signal.SIGTERM, signal.SIGHUP)
    try:
        previous = {sig: signal.signal(sig, _terminate) for sig in handled}
    except ValueError:  # not the main thread: leave signals to the caller
        previous = {}
    try:
        if args.command == "run":
            check_positive("--iterations", args.iterations)
            check_positive("--env-step-budget", args.env_step_budget)
        with one_blas_thread():  # matrix-vector products: see psro.backends.threads
            return args.func(args)
    except (CliError, ToolkitError) as err:
        hint = _HINTS.get(type(err).__name__, "")
        print(f"psro {args.command}: error: {err}{hint}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # the reader of stdout is gone (`psro games | head`): stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the exit's own flush must not fail again
        return 128 + signal.SIGPIPE
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

