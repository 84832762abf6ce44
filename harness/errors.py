"""User errors: one line naming the file, field or parameter, exit code 2, no traceback.

Why: a truncated log, a duplicate id in a data file or a bad study key is the user's to fix,
and a 40-line traceback hides the one line that says where. Every CLI of the suite
(``harness``, the ``python -m`` tools) reports these through :func:`report_user_error`;
``--debug`` (or ``EVALSUITE_DEBUG=1``) shows the traceback as well. Anything else is a bug
and keeps its traceback.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import NoReturn, TextIO, TypeVar

__all__ = [
    "UserInputError",
    "debug_requested",
    "guarded",
    "report_user_error",
    "user_errors",
]

EXIT_USER_ERROR = 2


class UserInputError(ValueError):
    """An input the user gave is wrong; the message says which and where, in one line."""


def user_errors() -> tuple[type[BaseException], ...]:
    """The exception classes reported as one line (a data file's ``DataFileError`` from
    ``environments/`` is a ``ValueError``); imported on use, so importing this is cheap."""
    from harness.atomic import OutputWriteError

    return (UserInputError, OutputWriteError, FileNotFoundError, IsADirectoryError,
            NotADirectoryError, PermissionError, UnicodeDecodeError, ValueError)



def debug_requested(argv: Sequence[str] | None = None) -> bool:
    """``--debug`` on the command line, or ``EVALSUITE_DEBUG=1`` in the environment."""
    args = sys.argv[1:] if argv is None else argv
    return "--debug" in args or os.environ.get("EVALSUITE_DEBUG", "") not in ("", "0")


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, OSError) and getattr(exc, "filename", None) and exc.strerror:
        text = f"{exc.filename}: {exc.strerror}"
    lines = text.splitlines()
    if len(lines) > 1:  # several problems (a study file): keep each on its own line
        return "\n".join(lines)
    return lines[0]


def report_user_error(exc: BaseException, *, debug: bool = False,
                      stream: TextIO | None = None) -> NoReturn:
    """Print ``error: <message>`` (and the traceback with ``debug``) and exit with 2."""
    out = stream or sys.stderr
    if debug:
        traceback.print_exception(exc, file=out)
    print(f"error: {_one_line(exc)}", file=out)
    if not debug:
        print("(run again with --debug for the traceback)", file=out)
    raise SystemExit(EXIT_USER_ERROR)


T = TypeVar("T")


def guarded(main: Callable[[], T], argv: Sequence[str] | None = None) -> T:
    """Run a CLI's ``main``; user errors become one line and exit code 2.

    ``--debug`` is removed from ``sys.argv`` before ``main`` parses it, so every tool
    accepts it without declaring it.
    """
    debug = debug_requested(argv)
    if argv is None and "--debug" in sys.argv:
        sys.argv = [a for a in sys.argv if a != "--debug"]
    try:
        return main()
    except user_errors() as exc:
        report_user_error(exc, debug=debug)
