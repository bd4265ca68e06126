"""``psro judge``: train (or read from the cache) the debate game's judge and report it."""

from __future__ import annotations

import time


def cmd_judge(args) -> int:
    """``psro judge``: the judge of ``--size``, ``--pixels`` and ``--seed``: its checksum,
    its cache file and its ten-way accuracy from random nonzero pixels."""
    from games import judge as judges
    from psro.cli.common import CliError

    problem = judges.configuration_problem(args.size, args.pixels, args.seed,
                                           ("--size", "--pixels", "--seed"))
    if problem:
        raise CliError(problem)
    path = judges.cache_file(args.size, args.pixels, args.seed)
    if args.retrain and path.exists():
        path.unlink()
    cached = judges.cached_judge(args.size, args.pixels, args.seed) is not None
    damaged = path.exists() and not cached
    start = time.perf_counter()
    judge = judges.judge(args.size, args.pixels, args.seed)
    seconds = time.perf_counter() - start
    held_out, images = judges.accuracy(judge, args.pixels)
    trained_on, _ = judges.accuracy(judge, args.pixels, part="judge")
    source = "read from the cache" if cached else f"trained in {seconds:.1f} s" + (
        " (the cache file was damaged; it was replaced)" if damaged else "")
    print(f"judge of {args.size}x{args.size} digits from {args.pixels} pixels, seed "
          f"{args.seed}: {source}")
    print(f"  checksum {judge.checksum}")
    kept = "" if path.is_file() else (" (not written: the cache folder cannot be written; "
                                      "PSRO_CACHE names another)")
    print(f"  file     {path}{kept}")
    print(f"  accuracy from {args.pixels} random nonzero pixels: {held_out:.3f} on the "
          f"{images} debate images (not trained on), {trained_on:.3f} on its training images")
    return 0


def add_parser(sub) -> None:
    """The ``judge`` subcommand."""
    judge = sub.add_parser("judge", help="train (or read from the cache) the debate game's "
                                         "judge and report its accuracy")
    judge.add_argument("--size", type=int, default=8, help="image side: 8 (default) or 4")
    judge.add_argument("--pixels", type=int, default=6,
                       help="revealed pixels it judges from (the game's reveals; default 6)")
    judge.add_argument("--seed", type=int, default=0, help="training seed (the game's "
                                                           "judge_seed; default 0)")
    judge.add_argument("--retrain", action="store_true",
                       help="train again even when the cache holds this judge")
    judge.set_defaults(func=cmd_judge)
