"""What the subcommands of ``psro`` share: the one-line error of the command line and the
``KEY=VALUE`` options of repeatable flags."""

from __future__ import annotations

EXIT_USAGE = 2


class CliError(Exception):
    """A user-facing error of the command line itself: printed as one line, exit status 2."""


def parse_option(text: str, flag: str) -> tuple[str, object]:
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


def options(texts: list[str] | None, flag: str) -> dict | None:
    """The ``key=value`` texts of a repeatable flag as a dict (None when none were given)."""
    return None if not texts else dict(parse_option(t, flag) for t in texts)
