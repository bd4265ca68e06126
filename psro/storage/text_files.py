"""Reading user files safely: text, JSON and TOML readers that turn every way a file can be bad
(missing, a folder or device, too large, not UTF-8, nested too deeply for the parser, integers
past Python's conversion limit) into one ``ValueError`` line, which each caller words as its
own error."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path

MAX_TEXT_BYTES = 256 * 2**20
"""Largest JSON or TOML file the readers accept (256 MiB)."""


def one_line(err: BaseException) -> str:
    """An exception's message as one line: its first non-empty line (torch and OpenSpiel
    messages run to many), or the exception's type name when it has none."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


def read_text(path: str | Path, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a regular file. ``ValueError`` with one line saying why not: missing,
    a directory or device, unreadable, larger than ``limit`` bytes, or not UTF-8."""
    path = Path(path)
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise ValueError(f"it is {kind}")
        if info.st_size > limit:
            raise ValueError(f"it holds {info.st_size:,} bytes; the limit is {limit:,}")
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise ValueError("it does not exist") from None
    except OSError as err:
        raise ValueError(f"it cannot be read ({err.strerror or one_line(err)})") from None
    if len(data) > limit:
        raise ValueError(f"it holds more than {limit:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None


def _parse(loads, decode_error: type[Exception], kind: str, text: str):
    """``loads(text)`` with every failure one ``ValueError`` line naming the format ``kind``
    (syntax, nesting too deep for the parser, integers past Python's conversion limit)."""
    try:
        return loads(text)
    except decode_error as err:
        raise ValueError(f"it is not valid {kind} ({err})") from None
    except RecursionError:
        raise ValueError(f"it is not readable {kind} (nested too deeply)") from None
    except ValueError as err:
        raise ValueError(f"it is not readable {kind} ({one_line(err)})") from None


def parse_json(text: str) -> object:
    """``json.loads`` whose every failure is one ``ValueError`` line (syntax, nesting too deep
    for the parser, integers past Python's 4,300-digit conversion limit)."""
    return _parse(json.loads, json.JSONDecodeError, "JSON", text)


def read_json(path: str | Path, limit: int = MAX_TEXT_BYTES) -> object:
    """The JSON value in a file (:func:`read_text` and :func:`parse_json`)."""
    return parse_json(read_text(path, limit))


def read_toml(path: str | Path, limit: int = MAX_TEXT_BYTES) -> dict:
    """The table in a TOML file; every failure is one ``ValueError`` line."""
    return _parse(tomllib.loads, tomllib.TOMLDecodeError, "TOML", read_text(path, limit))
