"""Reading a user's data file (a JSON array or JSON lines) with errors that name the place.

Why one module: every benchmark loader that reads user data (MedVersa's splits, FormulaCode's
task records) has the same failure modes: a missing path, a folder, an empty file, bytes
that are not UTF-8, a truncated array, one bad JSON line, two records with the same id (ids
become Inspect sample ids, so a duplicate makes one sample shadow another). Each is a
:class:`DataFileError` whose message is one line: the file, the line where there is one, and
what to do. Domain code (no Inspect, no harness), so ``environments/`` loaders can use it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["DataFileError", "check_unique_ids", "read_records"]


class DataFileError(ValueError):
    """A data file that cannot be used; ``str()`` is ``path[:line]: reason``."""

    def __init__(self, path: str | Path, reason: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {reason}")


def _text(path: Path) -> str:
    """The file's text, or a :class:`DataFileError` saying why there is none."""
    if not path.exists():
        raise DataFileError(path, "no such file; check the path (or the dataset id)")
    if path.is_dir():
        raise DataFileError(path, "is a folder, not a data file; name the .json or .jsonl "
                                  "file inside it")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataFileError(path, f"cannot be read ({exc.strerror or exc})") from None
    if not raw.strip():
        raise DataFileError(path, "is empty; expected a JSON array or JSON lines of records")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataFileError(path, f"byte {exc.start} is not UTF-8 ({raw[exc.start]:#04x}); "
                                  "save the file as UTF-8", line) from None


def read_records(path: str | Path, *, json_lines: bool | None = None
                 ) -> list[tuple[int | None, Any]]:
    """``(line, record)`` for every record of a JSON array (``.json``) or JSON-lines file
    (``.jsonl``): for JSON lines the 1-based line in the file as it is (blank lines
    counted); for an array None (the parser does not say; records are named by index).

    Args:
        path: The file.
        json_lines: Read as JSON lines (True) or one JSON array (False); default by suffix
            (``.jsonl`` lines, ``.json`` an array, anything else by its first character).

    Raises:
        DataFileError: Missing, a folder, empty, not UTF-8, not valid JSON (with the line
            and column where the parser stopped: a truncated file names its last line), or
            a ``.json`` whose top level is not an array.
    """
    file = Path(path)
    text = _text(file)
    if json_lines is None:
        json_lines = file.suffix == ".jsonl" or (
            file.suffix != ".json" and not text.lstrip().startswith("["))
    if json_lines:
        rows: list[tuple[int | None, Any]] = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as exc:
                raise DataFileError(file, f"not valid JSON ({exc.msg} at column {exc.colno}); "
                                          "each line must be one JSON record", number) from None
        return rows
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # an unterminated string runs to the end of the file, like any truncation
        ends_early = (exc.pos >= len(text.rstrip())
                      or exc.msg.startswith("Unterminated string"))
        hint = "; the file ends early (truncated?)" if ends_early else ""
        raise DataFileError(file, f"not valid JSON ({exc.msg} at column {exc.colno}){hint}",
                            exc.lineno) from None
    if not isinstance(data, list):
        raise DataFileError(file, f"expected a JSON array of records, got a "
                                  f"{type(data).__name__}", 1)
    return [(None, row) for row in data]


def check_unique_ids(path: str | Path, records: Sequence[Any],
                     id_of: Callable[[Any], Any], *,
                     numbers: Sequence[int] | None = None, what: str = "record") -> None:
    """Raise :class:`DataFileError` at the first id that two records share, naming both.

    Args:
        path: The file (for the message).
        records: The records, in file order.
        id_of: The id of a record (records whose id is None are not compared).
        numbers: What to call each record in the message (a line for JSON lines); default
            its 0-based index in the file, as validation errors name records.
        what: The noun for a record (``record``, ``task``).
    """
    first: dict[str, int] = {}
    for position, record in enumerate(records):
        value = id_of(record)
        if value is None:
            continue
        key = str(value)
        if key in first:
            earlier, later = first[key], position
            if numbers is not None:
                label = f"lines {numbers[earlier]} and {numbers[later]}"
                line: int | None = numbers[later]
            else:
                label = f"{what}s {earlier} and {later}"
                line = None
            raise DataFileError(path, f"id {key!r} is used by {label}; ids become Inspect "
                                      "sample ids and must be unique", line)
        first[key] = position
