"""Errors meant for users: each names the file or key, the row, and the problem."""

import json


class BoolbenchError(Exception):
    """A problem with the user's input or config; shown as one line, without a traceback."""


class ConfigError(BoolbenchError):
    """The config is invalid."""


class InputError(BoolbenchError):
    """An input file is missing or malformed."""


def located(path: object, problem: str, *, line: int | None = None, row: int | None = None) -> str:
    """Format 'path, line N: problem' (or 'row N' for files without meaningful lines)."""
    where = str(path)
    if line is not None:
        where += f", line {line}"
    elif row is not None:
        where += f", row {row}"
    return f"{where}: {problem}"


def json_problem(err: json.JSONDecodeError) -> str:
    """What a JSON decode error found, and at which column of its line (its `msg` alone is
    cut short, e.g. "Invalid control character at")."""
    what = err.msg.removesuffix(" at")
    if what == "Invalid control character":
        found = err.doc[err.pos : err.pos + 1]
        return (
            f"invalid JSON ({what} {found!r} at column {err.colno}: a JSON string holds it escaped)"
        )
    return f"invalid JSON ({what} at column {err.colno})"
