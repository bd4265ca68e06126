"""``psro report``: reports, figures and tables for run directories."""

from __future__ import annotations

import argparse
from pathlib import Path

from psro.cli.common import CliError


def cmd_report(args) -> int:
    """``psro report``: reports, figures and tables for run directories."""
    from psro.reports import write_report

    if args.out is not None and not args.out.strip():
        raise CliError("--out needs a folder name (it was empty); without --out the report "
                       "goes to DIR/report of the first run")
    out = args.out or str(Path(args.dirs[0]) / "report")
    labels = {}
    for text in args.label or []:
        directory, sep, label = text.partition("=")
        if not sep or not directory.strip() or not label.strip():
            raise CliError(f"--label needs DIR=TEXT; got {text!r}")
        directory = str(Path(directory.strip()))  # runs/a/ and runs/a are one directory
        earlier = labels.get(directory)
        if earlier is not None and earlier != label.strip():
            raise CliError(f"--label gives {directory} two labels, {earlier!r} and "
                           f"{label.strip()!r}; give each directory one")
        labels[directory] = label.strip()
    formats = [f.strip() for text in args.format or [] for f in text.split(",") if f.strip()]
    md, html_file = write_report(args.dirs, out, labels, tuple(formats) or ("png",),
                                 per_run=args.runs)
    print(f"wrote {md}, {html_file}, table.tex, table.csv and the figures in {out}")
    return 0


def add_parser(sub) -> None:
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


