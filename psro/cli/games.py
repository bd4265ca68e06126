"""``psro games``: the catalogue and OpenSpiel's registered games."""

from __future__ import annotations


def cmd_games(args) -> int:
    """``psro games``: the catalogue and OpenSpiel's registered games."""
    import pyspiel

    from games import CATALOG

    print("Normal-form catalogue (psro run --game NAME or NAME(key=value,...)):")
    for name, entry in CATALOG.items():
        params = ", ".join(f"{k}={v}" for k, v in entry.defaults.items())
        print(f"  {name:20s} {entry.summary}" + (f"  [{params}]" if params else ""))
    from games.debate import DEFAULTS

    params = ", ".join(f"{k}={v}" for k, v in DEFAULTS.items())
    print("\nThe toolkit's own OpenSpiel games:")
    print(f"  {'debate':20s} two debaters reveal pixels of a digit to a judge (games.debate)"
          f"  [{params}]")
    names = sorted(pyspiel.registered_names())
    print(f"\nOpenSpiel games ({len(names)} registered; any game string works, parameters "
          f"included, e.g. goofspiel(num_cards=4)):")
    for i in range(0, len(names), 4):
        print("  " + "".join(f"{n:32s}" for n in names[i:i + 4]).rstrip())
    return 0


def add_parser(sub) -> None:
    """The ``games`` subcommand."""
    games = sub.add_parser("games", help="list the games")
    games.set_defaults(func=cmd_games)
