"""Read MedVersa-format files (or a named dataset) and validate every record.

    python -m environments.medversa.load PATH --json     # {"records", "subjects", "errors"}
    python -m environments.medversa.load sample --json   # the project's own sample set

Exit status 1 when any record is malformed; each error names the record and the field.
Dataset ids: ``sample`` (the shipped set, written by this project) or ``medversa:<split>``
with ``$MEDVERSA_DIR`` pointing at a folder holding ``<split>.json`` (the original
train/valid/test files; nothing is downloaded).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from environments.datafiles import DataFileError, check_unique_ids, read_records
from environments.medversa.schema import (
    EditCase,
    Format,
    RecordError,
    detect_format,
    to_case,
    validate_record,
)

SAMPLE_PATH = Path(__file__).parent / "data" / "sample.json"


def resolve(source: str | os.PathLike[str]) -> Path:
    """A file path for a path or a dataset id (see the module docstring)."""
    text = str(source)
    if text == "sample":
        return SAMPLE_PATH
    if text.startswith("medversa:"):
        folder = os.environ.get("MEDVERSA_DIR")
        if not folder:
            raise FileNotFoundError(f"{text}: set MEDVERSA_DIR to the folder with the split files")
        return Path(folder) / f"{text.split(':', 1)[1]}.json"
    return Path(text)


def _record_id(row: Any) -> Any:
    return row.get("id") if isinstance(row, dict) else None


def read_numbered(source: str | os.PathLike[str]) -> list[tuple[int | None, Any]]:
    """``(line, row)`` of a file (lines for JSON lines, None in an array), unvalidated.

    Raises:
        DataFileError: The file is missing, a folder, empty, not UTF-8 or not valid JSON
            (with the line), or two records share an id (both named).
    """
    path = resolve(source)
    numbered = read_records(path)
    rows = [row for _, row in numbered]
    lines = [line for line, _ in numbered]
    check_unique_ids(path, rows, _record_id,
                     numbers=None if path.suffix != ".jsonl" else [n or 0 for n in lines])
    return numbered


def read_raw(source: str | os.PathLike[str]) -> list[Any]:
    """The JSON array (or JSON-lines rows) of a file, unvalidated (see :func:`read_numbered`
    for the errors it raises)."""
    return [row for _, row in read_numbered(source)]


def load_records(source: str | os.PathLike[str], fmt: Format | None = None) -> list[dict[str, Any]]:
    """Raw records after validation; raises :class:`RecordError` on the first malformed one."""
    rows = read_raw(source)
    for i, row in enumerate(rows):
        errors = validate_record(row, i, fmt)
        if errors:
            raise errors[0]
    return rows


def load_dataset(source: str | os.PathLike[str] = "sample",
                 fmt: Format | None = None) -> list[EditCase]:
    """Validated records in the common evaluation view, in file order."""
    return [to_case(row, i, fmt) for i, row in enumerate(load_records(source, fmt))]


def summarize(source: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"records": n, "subjects": n, "errors": [...]}`` for a file, never raising on records."""
    rows = read_raw(source)
    errors: list[RecordError] = []
    subjects: set[str] = set()
    for i, row in enumerate(rows):
        errors.extend(validate_record(row, i))
        if isinstance(row, dict):
            subj = row.get("subject_name", row.get("subject"))
            if isinstance(subj, str):
                subjects.add(subj)
    return {"records": len(rows), "subjects": len(subjects), "errors": [str(e) for e in errors],
            "format": detect_format(rows[0]) if rows and isinstance(rows[0], dict) else None}


def main(argv: list[str] | None = None) -> int:
    """CLI entry: print the summary; exit 1 when any record is malformed, 2 (one line on
    stderr naming the file and line) when the file itself cannot be used."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "-h" in args or "--help" in args:
        print("usage: harness medversa load PATH [--json] [--debug]\n\n"
              + (__doc__ or "").strip())
        return 0
    as_json = "--json" in args
    debug = "--debug" in args
    paths = [a for a in args if a not in ("--json", "--debug")]
    if len(paths) != 1:
        print("usage: python -m environments.medversa.load PATH [--json] [--debug]",
              file=sys.stderr)
        return 2
    try:
        summary = summarize(paths[0])
    except (DataFileError, FileNotFoundError) as exc:
        if debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = {k: summary[k] for k in ("records", "subjects", "errors")}
    if as_json:
        print(json.dumps(out))
    else:
        print(f"{out['records']} records, {out['subjects']} subjects, {len(out['errors'])} errors")
        for err in out["errors"]:
            print(f"  {err}")
    return 1 if out["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
