"""Inspect logs -> one tidy polars frame. The project's only reader of logs.

One row per sample x epoch x score key. Every consumer (factorial analysis, reports,
leaderboards) reads logs through :func:`read_results`, so the meaning of a row is fixed in
one place:

* ``score_key`` is the scorer name for a scalar score and ``"<scorer>/<key>"`` for each
  entry of a dict-valued (or list-valued, key = index) score; ``scorer`` holds the name.
* ``score_value`` is a float, mapped as Inspect's ``value_to_float()`` maps values
  (``C``/``I``/``P``/``N`` -> 1/0/0.5/0, ``yes``/``true`` -> 1, numeric strings parsed),
  except that a value that cannot be converted is **null** rather than Inspect's 0.0, so an
  unparseable score is never silently counted as wrong.
* A sample that errored (or was not scored by some scorer) still gets one row for every
  score key seen in its log file, with ``score_value`` null and ``error`` set: errors are
  visible to every consumer instead of vanishing from denominators.
* Token counts are summed over every model the sample used (0 when it made no call).

How an errored (or unscored) row counts in a mean is one explicit policy, applied here for
every consumer by :func:`apply_errored_policy`: ``zero`` (it scores 0 and stays in the
mean) or ``drop`` (it leaves the mean and is only counted). Each task's default comes from
its benchmark's ``eval.yaml`` (:mod:`harness.evalspec`), per score key; a caller may
override it. A lower-is-better score never takes ``zero`` (0 would beat every real result).
:func:`errored_counts` gives the counts each output states next to its means.

Why not ``inspect_ai.analysis.samples_df``: it validates every summary through pydantic
and builds pandas frames, which costs ~10x the time and ~4x the memory on a 100k-sample
study (see ``tests/perf/test_results_perf.py``). This module reads ``header.json`` and
``summaries.json`` (or the ``_journal/`` members of an interrupted eval) straight from the
``.eval`` zip, one file at a time, and never imports ``inspect_ai``. Inspect writes zip
members with zstd (method 93), which Python < 3.14's ``zipfile`` cannot decompress, so
members are decompressed here with ``zstandard`` (an Inspect dependency).
"""

from __future__ import annotations

import json
import math
import struct
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from harness import _logfiles, remote_logs
from harness.errors import UserInputError

if TYPE_CHECKING:
    from harness.evalspec import ErroredPolicy

try:  # orjson is ~3x faster on summaries; the stdlib is the fallback
    import orjson

    def _loads(data: bytes) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:  # NaN/Infinity, which Inspect may write
            return json.loads(data)

    def _dumps(value: Any) -> str:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()

except ImportError:  # pragma: no cover - exercised only without orjson

    def _loads(data: bytes) -> Any:
        return json.loads(data)

    def _dumps(value: Any) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"))


__all__ = [
    "POLICY_COLUMNS",
    "SCHEMA",
    "DuplicateLogError",
    "LogAccount",
    "LogReadError",
    "Results",
    "SetAside",
    "load_results",
    "apply_errored_policy",
    "errored_counts",
    "errored_policies",
    "with_unreported_keys",
    "iter_results",
    "iter_samples",
    "list_logs",
    "read_headers",
    "read_log",
    "read_model_calls",
    "read_results",
    "read_sample_messages",
    "read_product",
    "read_score_metadata",
    "read_training_log",
    "scan_results",
    "score_to_float",
    "with_metadata_columns",
    # run comparison (issue 51)
    "read_eval_specs",
    "read_inspect_log",
    "read_sample_output",
    "read_sample_texts",
]

PathLike = str | Path
LogPaths = PathLike | Sequence[PathLike]

SCHEMA: dict[str, pl.DataType] = {
    "log_file": pl.String(),
    "eval_id": pl.String(),
    "run_id": pl.String(),
    "created": pl.String(),
    "status": pl.String(),
    "task": pl.String(),
    "task_version": pl.String(),
    "task_args": pl.String(),
    "model": pl.String(),
    "model_args": pl.String(),
    "solver": pl.String(),
    "generate_config": pl.String(),
    "tags": pl.List(pl.String()),
    "eval_metadata": pl.String(),
    "packages": pl.String(),
    "sample_id": pl.String(),
    "epoch": pl.Int64(),
    "scorer": pl.String(),
    "score_key": pl.String(),
    "score_value": pl.Float64(),
    "score_answer": pl.String(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "total_tokens": pl.Int64(),
    "cache_read_tokens": pl.Int64(),
    "total_time": pl.Float64(),
    "working_time": pl.Float64(),
    "error": pl.String(),
    "limit": pl.String(),
    "sample_metadata": pl.String(),
}
"""Column names and types of the results frame, in order. JSON columns are strings with
sorted keys, so equal dicts compare equal as strings (useful for grouping)."""

_EVAL_COLUMNS = [
    "log_file", "eval_id", "run_id", "created", "status", "task", "task_version",
    "task_args", "model", "model_args", "solver", "generate_config", "tags", "eval_metadata",
    "packages",
]
_ZSTD = 93  # zip compression method id for zstandard
_HEADER = "header.json"
_SUMMARIES = "summaries.json"
_START = "_journal/start.json"
_JOURNAL_SUMMARIES = "_journal/summaries/"
_NOT_LOGS = {"logs.json", "eval-set.json"}  # JSON files Inspect writes next to logs
_STREAM_BYTES = 64 * 2**20  # .json logs above this are streamed (harness._logfiles)
_LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


# --------------------------------------------------------------------------- discovery


def list_logs(paths: LogPaths, *, recursive: bool = True) -> list[Path]:
    """Every ``.eval``/``.json`` log named by ``paths`` (files kept, directories searched).

    Hidden folders, Inspect's non-log JSON (``logs.json``, ``eval-set.json``) and its
    checkpoint folders (``*.checkpoints/``) are skipped while searching; files named
    explicitly are always kept.
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    found: list[Path] = []
    for item in items:
        if remote_logs.is_remote(item):  # s3://, gs://, ...: mirrored through fsspec
            found.extend(remote_logs.fetch(str(item), recursive=recursive))
            continue
        path = Path(item)
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            for child in sorted(path.glob(pattern)):
                rel = child.relative_to(path).parts
                if (
                    child.suffix in (".eval", ".json")
                    and child.is_file()
                    and child.name not in _NOT_LOGS
                    and not any(part.startswith(".") for part in rel)
                    # Inspect's mid-sample checkpoints (<log-base>.checkpoints/) hold JSON
                    # that is not a log; a resumed eval's log sits beside that folder
                    and not any(part.endswith(".checkpoints") for part in rel[:-1])
                ):
                    found.append(child)
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"no log file or directory at {path}")
    return found


# --------------------------------------------------------------------------- zip members


def _zstd_decompress(raw: bytes) -> bytes:
    """Decompress a zstd stream that may hold several frames (Inspect splits big members)."""
    import zstandard

    dctx = zstandard.ZstdDecompressor()
    out: list[bytes] = []
    while raw:
        obj = dctx.decompressobj()
        out.append(obj.decompress(raw))
        raw = obj.unused_data
    return b"".join(out)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, decompressing zstd members ourselves (stdlib < 3.14 cannot)."""
    if info.compress_type != _ZSTD:
        return zf.read(info)
    fp = zf.fp
    assert fp is not None
    fp.seek(info.header_offset)
    local = fp.read(30)
    if local[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    name_len, extra_len = struct.unpack("<HH", local[26:30])
    fp.seek(info.header_offset + 30 + name_len + extra_len)
    return _zstd_decompress(fp.read(info.compress_size))


def _journal_index(name: str) -> int:
    return int(name.rsplit("/", 1)[-1].split(".", 1)[0])


def _member_json(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> Any:
    """One zip member decoded as JSON; any failure names the file and the member."""
    try:
        return _loads(_read_member(zf, info))
    except (ValueError, zipfile.BadZipFile, EOFError, OSError) as exc:
        raise LogReadError(path, f"member {info.filename} cannot be read "
                                 f"({type(exc).__name__}: {exc})") from None
    except Exception as exc:  # zstandard.ZstdError and the like: a damaged member
        raise LogReadError(path, f"member {info.filename} cannot be decompressed "
                                 f"({type(exc).__name__}: {exc})") from None


def _read_eval_members(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(header, summaries) of a finished ``.eval`` log, located without parsing the whole
    zip directory (:mod:`harness._logfiles`); None where that does not apply (a journal-only
    log, zip64 entries, any damage), and :func:`_read_eval_zip` reads it with ``zipfile``,
    which names the damage."""
    try:
        with path.open("rb") as fp:
            members = _logfiles.find_members(fp, (_HEADER, _SUMMARIES))
            if members is None or _HEADER not in members or _SUMMARIES not in members:
                return None
            header = _loads(_logfiles.read_member(fp, members[_HEADER]))
            summaries = _loads(_logfiles.read_member(fp, members[_SUMMARIES]))
    except Exception:  # noqa: BLE001 - any failure: the zipfile path reports it
        return None
    return header, summaries


def _read_eval_zip(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, sample summaries) of a ``.eval`` file; falls back to the journal.

    Raises:
        LogReadError: The file is empty, not a zip (truncated or corrupt), or holds neither
            a header nor a journal.
    """
    if path.stat().st_size == 0:
        raise LogReadError(path, "empty file (0 bytes): not an Inspect log")
    fast = _read_eval_members(path)
    if fast is not None:
        return fast
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise LogReadError(path, f"not a readable .eval zip (truncated or corrupt: {exc})"
                           ) from None
    with zf:
        infos = {info.filename: info for info in zf.infolist()}
        if _HEADER in infos:
            header = _member_json(zf, infos[_HEADER], path)
        elif _START in infos:  # interrupted or still running: only the journal exists
            header = _member_json(zf, infos[_START], path)
            if isinstance(header, dict):
                header.setdefault("status", "started")
        else:
            raise LogReadError(path, f"holds neither {_HEADER} nor {_START}: "
                                     "not an Inspect log")
        if _SUMMARIES in infos:
            summaries = _member_json(zf, infos[_SUMMARIES], path)
        else:
            names = sorted(
                (n for n in infos if n.startswith(_JOURNAL_SUMMARIES) and n.endswith(".json")),
                key=_journal_index,
            )
            summaries = []
            for name in names:
                part = _member_json(zf, infos[name], path)
                if not isinstance(part, list):
                    raise LogReadError(path, f"member {name}: expected a list of samples")
                summaries.extend(part)
    return header, summaries


def _read_json_log(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(header, samples) of a ``.json`` log, or None when the file is not an Inspect log.

    A log over :data:`_STREAM_BYTES` is streamed (its header, then one sample at a time,
    keeping the fields the frame reads), so a 1 GB log with its transcripts inline is read
    in bounded memory; one that cannot be streamed is read whole as before.
    """
    if path.stat().st_size > _STREAM_BYTES:
        streamed = _logfiles.stream_json_log(path)
        if streamed is not None:
            return streamed
    try:
        data = _loads(path.read_bytes())
    except ValueError:  # not JSON at all (an empty or a text file given by name)
        return None
    if not isinstance(data, dict) or "eval" not in data:
        return None
    samples = data.pop("samples", None) or []
    return data, samples


# --------------------------------------------------------------------------- mapping


def score_to_float(value: Any) -> float | None:
    """Map a scalar score value to a float as Inspect's ``value_to_float()`` does.

    Returns None (not Inspect's 0.0) for values it cannot convert, e.g. free text.
    """
    if isinstance(value, str):
        letter = _LETTERS.get(value)
        if letter is not None:
            return letter
        lowered = value.lower()
        if lowered in ("yes", "true"):
            return 1.0
        if lowered in ("no", "false"):
            return 0.0
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    if isinstance(value, bool | int | float):
        return float(value)
    return None


def _score_entries(name: str, score: Any) -> Iterator[tuple[str, float | None, str | None]]:
    """(score_key, value, answer) for one scorer's score; dicts/lists give one per entry."""
    if not isinstance(score, dict):
        return
    value = score.get("value")
    answer = score.get("answer")
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"{name}/{key}", score_to_float(item), answer
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield f"{name}/{index}", score_to_float(item), answer
    else:
        yield name, score_to_float(value), answer


def _solver_name(spec: dict[str, Any], plan: dict[str, Any]) -> str | None:
    if spec.get("solver"):
        return str(spec["solver"])
    steps = [str(step.get("solver")) for step in plan.get("steps") or []]
    return " -> ".join(steps) if steps else None


def _eval_values(header: dict[str, Any], log_file: str) -> dict[str, Any]:
    """The eval-level columns (constant within one log file)."""
    spec: dict[str, Any] = header.get("eval") or {}
    plan: dict[str, Any] = header.get("plan") or {}
    generate = {**(spec.get("model_generate_config") or {}), **(plan.get("config") or {})}
    tags = header["tags"] if "tags" in header else spec.get("tags")
    metadata = header["metadata"] if "metadata" in header else spec.get("metadata")
    version = spec.get("task_version")
    return {
        "log_file": log_file,
        "eval_id": spec.get("eval_id"),
        "run_id": spec.get("run_id"),
        "created": spec.get("created"),
        "status": header.get("status"),
        "task": spec.get("task"),
        "task_version": None if version is None else str(version),
        "task_args": _dumps(spec.get("task_args") or {}),
        "model": spec.get("model"),
        "model_args": _dumps(spec.get("model_args") or {}),
        "solver": _solver_name(spec, plan),
        "generate_config": _dumps({k: v for k, v in generate.items() if v is not None}),
        "tags": list(tags or []),
        "eval_metadata": _dumps(metadata or {}),
        "packages": _dumps(spec.get("packages") or {}),
    }


def _header_scorers(header: dict[str, Any]) -> list[str]:
    return [str(s["name"]) for s in (header.get("eval") or {}).get("scorers") or [] if "name" in s]


def _text(value: Any) -> str | None:
    """An error/limit as text: summaries hold strings, full samples hold objects."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dict):
        for field in ("message", "type"):
            if field in value:
                return str(value[field])
    return str(value)


def _frame(header: dict[str, Any], samples: list[dict[str, Any]], log_file: str) -> pl.DataFrame:
    """Build one log's rows column by column (no per-row dicts, no pydantic).

    The loops are the reader's hot path (100k samples): score values are converted once
    per distinct value (a log holds few: ``C``/``I``, a handful of numbers), and columns
    are built by comprehensions rather than appends (issue 51 item 9).
    """
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for sample in samples:  # a re-run sample's later record wins, as in Inspect
        latest[(str(sample["id"]), int(sample["epoch"]))] = sample
    records = list(latest.values())

    # the file's score keys, in first-seen order; scorers nobody reported keep their name
    keys: dict[str, str] = {}
    parsed: list[dict[str, tuple[float | None, str | None]]] = []
    converted: dict[Any, float | None] = {}

    def to_float(value: Any) -> float | None:
        kind = type(value)
        if kind is float:
            return value  # type: ignore[no-any-return]
        if kind is int:
            return float(value)
        if kind is str:
            try:
                return converted[value]
            except KeyError:
                converted[value] = result = score_to_float(value)
                return result
        return score_to_float(value)

    for sample in records:
        entries: dict[str, tuple[float | None, str | None]] = {}
        scores = sample.get("scores")
        if scores:
            for name, score in scores.items():
                if not isinstance(score, dict):
                    continue
                value = score.get("value")
                answer = score.get("answer")
                if isinstance(value, dict):
                    items: Iterable[tuple[Any, Any]] = value.items()
                elif isinstance(value, list):
                    items = enumerate(value)
                else:
                    entries[name] = (to_float(value), answer)
                    if name not in keys:
                        keys[name] = name
                    continue
                for key, item in items:
                    full = f"{name}/{key}"
                    entries[full] = (to_float(item), answer)
                    if full not in keys:
                        keys[full] = name
        parsed.append(entries)
    for name in _header_scorers(header):
        if name not in keys.values():
            keys[name] = name
    key_list: list[str | None] = list(keys) or [None]
    width = len(key_list)

    tokens: list[list[int]] = [[], [], [], []]
    for sample in records:
        n_in = n_out = n_total = n_cache = 0
        for usage in (sample.get("model_usage") or {}).values():
            n_in += usage.get("input_tokens") or 0
            n_out += usage.get("output_tokens") or 0
            n_total += usage.get("total_tokens") or 0
            n_cache += usage.get("input_tokens_cache_read") or 0
        tokens[0].append(n_in)
        tokens[1].append(n_out)
        tokens[2].append(n_total)
        tokens[3].append(n_cache)
    errors = [sample.get("error") for sample in records]
    limits = [sample.get("limit") for sample in records]
    metadata = [sample.get("metadata") for sample in records]
    cols: dict[str, list[Any]] = {
        "sample_id": [k[0] for k in latest],
        "epoch": [k[1] for k in latest],
        "input_tokens": tokens[0],
        "output_tokens": tokens[1],
        "total_tokens": tokens[2],
        "cache_read_tokens": tokens[3],
        "total_time": [sample.get("total_time") for sample in records],
        "working_time": [sample.get("working_time") for sample in records],
        "error": [e if e is None or type(e) is str else _text(e) for e in errors],
        "limit": [e if e is None or type(e) is str else _text(e) for e in limits],
        "sample_metadata": [_dumps(m) if m else None for m in metadata],
    }
    missing = (None, None)
    if width == 1:
        only = key_list[0]
        pairs = [missing if only is None else entries.get(only, missing) for entries in parsed]
    else:
        pairs = [entries.get(slot, missing) if slot is not None else missing  # type: ignore[arg-type]
                 for entries in parsed for slot in key_list]

    n = len(records)
    per_sample = pl.DataFrame(cols, schema={c: SCHEMA[c] for c in cols})
    if width > 1:
        per_sample = per_sample[np.repeat(np.arange(n), width)]
    per_key = pl.DataFrame(
        {
            "scorer": [keys.get(k) if k is not None else None for k in key_list] * n,
            "score_key": key_list * n,
            "score_value": [p[0] for p in pairs],
            "score_answer": [p[1] for p in pairs],
        },
        schema={c: SCHEMA[c] for c in ("scorer", "score_key", "score_value", "score_answer")},
    )
    values = _eval_values(header, log_file)
    consts = [pl.lit(values[c], dtype=SCHEMA[c]).alias(c) for c in _EVAL_COLUMNS]
    frame = pl.concat([per_sample, per_key], how="horizontal")
    return frame.with_columns(consts).select(list(SCHEMA))


# --------------------------------------------------------------------------- public API


def _sample_json(log_file: PathLike, sample_id: str | int, epoch: int) -> dict[str, Any]:
    """One sample's JSON as Inspect wrote it (only that member of a ``.eval`` zip)."""
    path = remote_logs.local(log_file)
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as zf:
            try:
                info = zf.getinfo(f"samples/{sample_id}_epoch_{epoch}.json")
            except KeyError:
                raise KeyError(f"sample {sample_id} epoch {epoch} not in {path}") from None
            return dict(_loads(_read_member(zf, info)))
    data = json.loads(path.read_text(encoding="utf-8"))
    for sample in data.get("samples") or []:
        if str(sample.get("id")) == str(sample_id) and int(sample.get("epoch", 1)) == epoch:
            return dict(sample)
    raise KeyError(f"sample {sample_id} epoch {epoch} not in {path}")


def read_model_calls(log_file: PathLike, sample_id: str | int,
                     epoch: int = 1) -> pl.DataFrame:
    """One sample's model calls in order: ``input_tokens``, ``output_tokens``,
    ``cache_read_tokens`` (prompt tokens re-used from an earlier call), ``seconds``,
    ``stop_reason`` (the first choice's: ``max_tokens`` when the reply was cut by its cap)
    and ``max_tokens`` (the cap the call was made with; null when none was set).

    Why: an agent episode's cost is per turn (how much of each prompt was processed again);
    the results frame sums a sample's usage. A method's replies cut by the token cap are a
    property of the calls, not of the score, so whoever reports them reads them here.
    """
    rows = []
    for event in _sample_json(log_file, sample_id, epoch).get("events") or []:
        if event.get("event") != "model":
            continue
        output = event.get("output") or {}
        usage = output.get("usage") or {}
        choices = output.get("choices") or [{}]
        cap = (event.get("config") or {}).get("max_tokens")
        rows.append({"input_tokens": int(usage.get("input_tokens") or 0),
                     "output_tokens": int(usage.get("output_tokens") or 0),
                     "cache_read_tokens": int(usage.get("input_tokens_cache_read") or 0),
                     "seconds": float(event.get("working_time") or 0.0),
                     "stop_reason": _text(choices[0].get("stop_reason")),
                     "max_tokens": None if cap is None else int(cap)})
    schema = {"input_tokens": pl.Int64(), "output_tokens": pl.Int64(),
              "cache_read_tokens": pl.Int64(), "seconds": pl.Float64(),
              "stop_reason": pl.Utf8(), "max_tokens": pl.Int64()}
    return pl.DataFrame(rows, schema=schema)


def prompt_reuse(paths: LogPaths, *, recursive: bool = True) -> tuple[pl.DataFrame, LogAccount]:
    """Each agent episode's prompt cost: how many prompt tokens its model calls processed
    (input minus cache read) against the length of its final conversation.

    Why: a multi-turn agent re-sends its whole conversation every turn; an engine that
    re-uses the cached prefix processes little more than the final conversation once
    (ratio near 1), one that re-renders or re-evaluates it pays the conversation again on
    every turn. Columns: ``log_file``, ``sample_id``, ``epoch``, ``model``, ``calls``,
    ``processed_tokens``, ``final_prompt_tokens`` (the last call's prompt),
    ``max_prompt_tokens`` and ``ratio`` (processed / final). Episodes are the samples
    :func:`load_results` keeps (each sample and epoch once, however often the run was
    resumed or its log copied); its :class:`LogAccount` is returned beside the frame.
    Samples without a model call (a scripted agent) are left out.
    """
    results = load_results(paths, recursive=recursive)
    keys = results.frame.select("log_file", "sample_id", "epoch", "model").unique(
        maintain_order=True)
    rows = []
    for log_file, sample_id, epoch, model in keys.iter_rows():
        calls = read_model_calls(log_file, sample_id, int(epoch))
        if calls.height == 0:
            continue
        prompts = calls["input_tokens"].to_list()
        processed = sum(prompts) - sum(calls["cache_read_tokens"].to_list())
        final = prompts[-1]
        rows.append({"log_file": log_file, "sample_id": str(sample_id), "epoch": int(epoch),
                     "model": model, "calls": calls.height, "processed_tokens": processed,
                     "final_prompt_tokens": final,
                     "max_prompt_tokens": max(prompts),
                     "ratio": processed / final if final else None})
    schema = {"log_file": pl.Utf8(), "sample_id": pl.Utf8(), "epoch": pl.Int64(),
              "model": pl.Utf8(), "calls": pl.Int64(), "processed_tokens": pl.Int64(),
              "final_prompt_tokens": pl.Int64(), "max_prompt_tokens": pl.Int64(),
              "ratio": pl.Float64()}
    return pl.DataFrame(rows, schema=schema), results.account


def read_sample_messages(log_file: PathLike, sample_id: str | int,
                         epoch: int = 1) -> list[dict[str, Any]]:
    """One sample's logged chat messages, as the JSON dicts Inspect wrote.

    Methods that learn from trajectories (LightWM's schema induction) need the messages of a
    few chosen samples; the results frame holds scores, not transcripts. This reads only the
    one sample's member of a ``.eval`` zip (zstd members included) or scans a ``.json`` log.

    Raises:
        KeyError: The log holds no such sample and epoch.
    """
    return list(_sample_json(log_file, sample_id, epoch).get("messages") or [])


def iter_samples(log_file: PathLike) -> Iterator[dict[str, Any]]:
    """Every full sample of one log (input, target, messages, output, scores), one at a
    time, as the JSON dicts Inspect wrote.

    Why: an instance-level export (issue 51 item 6) needs each sample's transcript;
    :func:`read_sample_messages` per sample would open the zip once per sample. Here the
    zip is opened once and each ``samples/`` member decoded as it is reached; a ``.json``
    log over 64 MB is streamed (its samples are not all held at once).
    """
    path = Path(log_file)
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if info.filename.startswith("samples/") and info.filename.endswith(".json"):
                    yield dict(_loads(_read_member(zf, info)))
        return
    if path.stat().st_size > _STREAM_BYTES:
        import ijson

        with path.open("rb") as fp:
            yield from ijson.items(fp, "samples.item", use_float=True)
        return
    data = _loads(path.read_bytes())
    yield from (data.get("samples") or []) if isinstance(data, dict) else []


def _header_and_samples(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    if path.suffix == ".eval":
        return _read_eval_zip(path)
    return _read_json_log(path)


def _thinned(metadata: dict[str, Any]) -> bool:
    """Whether Inspect replaced a value of a sample summary's metadata by a note."""
    return any(isinstance(v, str) and v.startswith("Key removed from summary")
               for v in metadata.values())


def read_score_metadata(paths: LogPaths, scorer: str, *,
                        recursive: bool = True, once: bool = False) -> pl.DataFrame:
    """The ``metadata`` dict of one scorer's score on every sample, as JSON strings.

    The results frame keeps score values; some methods attach numbers to a score's metadata
    that a report also wants (the KV methods' tree bytes or modelled time to first token).
    Columns: ``log_file``, ``eval_metadata``, ``sample_id``, ``epoch``, ``metadata`` (sorted
    keys; ``{}`` when the score has none). Samples without that scorer's score are left out.
    Where Inspect thinned a sample's summary (a large value replaced by a "Key removed
    from summary" note), the metadata is read from that sample's full record instead.
    With ``once``, only the samples :func:`kept_samples` keeps (each sample once).
    """
    keep = kept_samples(paths, recursive=recursive)[0] if once else None
    rows: list[dict[str, Any]] = []
    for path in list_logs(paths, recursive=recursive):
        loaded = _header_and_samples(path)
        if loaded is None:
            continue
        header, samples = loaded
        eval_metadata = _eval_values(header, remote_logs.display(path))["eval_metadata"]
        for sample in samples:
            score = (sample.get("scores") or {}).get(scorer)
            if score is None:
                continue
            epoch = int(sample.get("epoch") or 1)
            if keep is not None and (remote_logs.display(path), str(sample.get("id")),
                                     epoch) not in keep:
                continue
            metadata = score.get("metadata") or {}
            if _thinned(metadata):
                full = _sample_json(path, sample.get("id", ""), epoch)
                metadata = ((full.get("scores") or {}).get(scorer) or {}).get("metadata") or {}
            rows.append({"log_file": remote_logs.display(path), "eval_metadata": eval_metadata,
                         "sample_id": str(sample.get("id")), "epoch": epoch,
                         "metadata": _dumps(metadata)})
    schema = {"log_file": pl.String(), "eval_metadata": pl.String(), "sample_id": pl.String(),
              "epoch": pl.Int64(), "metadata": pl.String()}
    return pl.DataFrame(rows, schema=schema)


def _validated(header: Any, samples: Any, path: Path
               ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and samples, checked for the fields every reader relies on; a missing or
    ill-typed one is a :class:`LogReadError` naming the field, not a KeyError later."""
    if not isinstance(header, dict):
        raise LogReadError(path, "header: expected a JSON object")
    version = header.get("version")
    if version is not None and not isinstance(version, int):
        raise LogReadError(path, f"field version: expected an integer, got {version!r}")
    if isinstance(version, int) and version > MAX_LOG_VERSION:
        raise LogReadError(path, f"field version: log format {version}, this reader knows "
                                 f"1-{MAX_LOG_VERSION}; upgrade the suite to read it")
    spec = header.get("eval")
    if not isinstance(spec, dict):
        raise LogReadError(path, "field eval: missing or not an object (not an Inspect log)")
    for name in ("task", "model"):
        if spec.get(name) is not None and not isinstance(spec[name], str):
            raise LogReadError(path, f"field eval.{name}: expected text, got {spec[name]!r}")
    if not isinstance(samples, list):
        raise LogReadError(path, "samples: expected a list")
    for index, sample in enumerate(samples):
        if not isinstance(sample, dict):
            raise LogReadError(path, f"samples[{index}]: expected an object")
        if sample.get("id") is None:
            raise LogReadError(path, f"samples[{index}].id: missing")
        epoch = sample.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int):
            raise LogReadError(path, f"samples[{index}].epoch: expected an integer, "
                                     f"got {epoch!r}")
        scores = sample.get("scores")
        if scores is not None and not isinstance(scores, dict):
            raise LogReadError(path, f"samples[{index}].scores: expected an object")
    return header, samples


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """(header, samples) of one log, validated; None for a ``.json`` that is no Inspect log.

    Raises:
        LogReadError: The file cannot be read, or a field every reader needs is invalid.
    """
    try:
        if path.suffix == ".eval":
            header, samples = _read_eval_zip(path)
        else:
            loaded = _read_json_log(path)
            if loaded is None:
                return None
            header, samples = loaded
    except OSError as exc:
        raise LogReadError(path, f"cannot be read ({exc.strerror or exc})") from None
    return _validated(header, samples, path)


def read_log(path: PathLike) -> pl.DataFrame | None:
    """One log file's rows; None for a ``.json`` file that is not an Inspect log.

    Raises:
        LogReadError: The file cannot be read or holds an invalid field (named).
    """
    path = remote_logs.local(path)
    loaded = _load(path)
    if loaded is None:
        return None
    return _frame(*loaded, remote_logs.display(path))


def iter_results(paths: LogPaths, *, recursive: bool = True) -> Iterator[pl.DataFrame]:
    """Stream the results one log file at a time (for bounded-memory aggregation).

    Each file is read on its own, so copies and superseded logs are *not* set aside here;
    a consumer that counts samples across files uses :func:`load_results`.
    """
    for path in list_logs(paths, recursive=recursive):
        frame = read_log(path)
        if frame is not None:
            yield frame


# --------------------------------------------------------------------------- identity


class LogReadError(UserInputError):
    """A log that cannot be read, or holds an invalid field: one line naming the file."""

    def __init__(self, path: PathLike, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{path}: {reason}")


class DuplicateLogError(UserInputError):
    """Two copies of the same run (same eval id) disagree about a sample: which is right
    cannot be told from the logs, so nothing is counted until one is removed."""


MAX_LOG_VERSION = 2
"""The newest Inspect log format version this reader understands."""

_STATUS_RANK = {"success": 3, "started": 2, "cancelled": 1, "error": 1}
_COMPARED = ["sample_id", "epoch", "score_key", "score_value", "error"]
_CONFIG_COLUMNS = ("task", "task_version", "task_args", "model", "model_args", "solver",
                   "generate_config", "eval_metadata")


@dataclass(frozen=True)
class SetAside:
    """A log file whose rows are not in the frame, and why.

    ``why`` is ``duplicate`` (a copy of a run another file holds: same eval id and
    creation time), ``superseded`` (an attempt of a cell whose every sample a better
    attempt holds: a successful one, or a newer one), ``partly superseded`` (an attempt
    some of whose samples a better attempt holds: those are set aside, the rest count),
    ``unreadable`` (named in ``detail``; only
    with ``skip_bad_logs``) or ``not a log`` (a ``.json`` file that is not an Inspect log).
    ``kept`` is the file whose samples count instead; ``samples`` how many (sample, epoch)
    pairs of this file were set aside.
    """

    log_file: str
    why: str
    kept: str | None = None
    samples: int = 0
    detail: str = ""


@dataclass
class LogAccount:
    """How a frame was counted: which files entered it and which were set aside.

    Every output that reads logs states :meth:`line` (or :meth:`as_dict`), so a reader
    can see that a resumed run or a copied log was counted once.
    """

    counted: list[str] = field(default_factory=list)
    set_aside: list[SetAside] = field(default_factory=list)
    samples: int = 0
    empty: list[str] = field(default_factory=list)

    def of(self, why: str) -> list[SetAside]:
        return [a for a in self.set_aside if a.why == why]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: counts, and each file set aside with its reason."""
        return {
            "logs_counted": len(self.counted),
            "samples_counted": self.samples,
            "logs_empty": len(self.empty),
            "duplicates_set_aside": len(self.of("duplicate")),
            "superseded_set_aside": len(self.of("superseded")),
            "partly_superseded": len(self.of("partly superseded")),
            "unreadable_skipped": len(self.of("unreadable")),
            "not_logs_skipped": len(self.of("not a log")),
            "set_aside": [{"log_file": a.log_file, "why": a.why, "kept": a.kept,
                           "samples": a.samples, "detail": a.detail}
                          for a in self.set_aside],
            "rule": COUNTING_RULE,
        }

    def line(self) -> str:
        """One sentence: what was counted and what was set aside."""
        text = (f"counted {self.samples} samples (sample x epoch) from "
                f"{len(self.counted)} log{'s' if len(self.counted) != 1 else ''}")
        parts = []
        for why, noun in (("duplicate", "duplicate cop{}"), ("superseded", "superseded log{}"),
                          ("partly superseded", "partly superseded log{}"),
                          ("unreadable", "unreadable log{}"), ("not a log", "non-log file{}")):
            n = len(self.of(why))
            if n:
                plural = ("ies" if n != 1 else "y") if noun.endswith("cop{}") else (
                    "s" if n != 1 else "")
                parts.append(f"{n} {noun.format(plural)}")
        return text + ("; set aside " + ", ".join(parts) if parts else "; nothing set aside")


COUNTING_RULE = (
    "each (cell, sample, epoch) once: copies of one run (same eval id and creation time) "
    "count once, and copies that differ are an error; attempts of one cell (same task, "
    "arguments, model, solver, generation config and eval metadata, as an eval set "
    "identifies a task) give each sample from the newest successful attempt that holds it, "
    "else from the newest attempt")


@dataclass(frozen=True)
class Results:
    """A results frame and the account of how it was counted."""

    frame: pl.DataFrame
    account: LogAccount


@dataclass
class _Log:
    path: Path
    header: dict[str, Any]
    frame: pl.DataFrame

    @property
    def spec(self) -> dict[str, Any]:
        return self.header.get("eval") or {}

    @property
    def run_key(self) -> tuple[str, ...]:
        eval_id, created = self.spec.get("eval_id"), self.spec.get("created")
        if not eval_id:
            return ("file", str(self.path.resolve()))
        return ("run", str(eval_id), str(created))

    @property
    def cell_key(self) -> tuple[str, ...]:
        """What makes two logs attempts of one cell: the task, its version and arguments,
        the model and its arguments, the solver, the generation config and the eval
        metadata (a study's cell id), the ingredients of Inspect's eval-set task identity
        that a log records; the task by its name without the package prefix. Not
        ``task_id``: an eval set resumed after a kill starts the task afresh, under a new
        id, when the killed log holds no finished sample."""
        values = _eval_values(self.header, "")
        # provenance (harness.provenance) describes the environment, not the cell: an
        # attempt resumed after a package upgrade is still an attempt of the same cell
        metadata = _loads(values["eval_metadata"].encode())
        if isinstance(metadata, dict) and "provenance" in metadata:
            values["eval_metadata"] = _dumps(
                {k: v for k, v in metadata.items() if k != "provenance"})
        # the same task is recorded as ``harness/arithmetic`` or ``arithmetic`` depending
        # on how the registry was loaded in that process (seen across one study's resume)
        values["task"] = str(values["task"] or "").rsplit("/", 1)[-1]
        return tuple(str(values[k]) for k in _CONFIG_COLUMNS)

    @property
    def order(self) -> tuple[int, str, str]:
        """Sort key: successful before not, then the newest, then the path."""
        return (_STATUS_RANK.get(str(self.header.get("status")), 0),
                str(self.spec.get("created") or ""), str(self.path))

    @property
    def n_samples(self) -> int:
        return self.frame.select("sample_id", "epoch").unique().height


def _compare_copies(kept: _Log, copy: _Log) -> None:
    """Raise :class:`DuplicateLogError` when two copies of a run disagree on a sample."""
    mine = kept.frame.select(_COMPARED)
    theirs = copy.frame.select(_COMPARED)
    joined = theirs.join(mine, on=["sample_id", "epoch", "score_key"], how="left",
                         suffix="_kept", nulls_equal=True)
    # a sample the kept copy lacks has null there, so it differs too
    bad = joined.filter(
        ~pl.col("score_value").eq_missing(pl.col("score_value_kept"))
        | ~pl.col("error").eq_missing(pl.col("error_kept"))).unique(["sample_id", "epoch"])
    if bad.height:
        first = bad.row(0, named=True)
        raise DuplicateLogError(
            f"{copy.path} and {kept.path} are copies of one run (eval id "
            f"{kept.spec.get('eval_id')}) but disagree on {bad.height} sample(s), e.g. "
            f"sample {first['sample_id']} epoch {first['epoch']}; remove the wrong one")


def _dedupe(logs: list[_Log], account: LogAccount) -> list[pl.DataFrame]:
    """The frames to count, each (run, sample, epoch) once; the rest go to ``account``."""
    runs: dict[tuple[str, ...], list[_Log]] = {}
    for log in logs:
        runs.setdefault(log.run_key, []).append(log)
    distinct: list[_Log] = []
    for copies in runs.values():
        ordered = sorted(copies, key=lambda c: (c.order[0], c.n_samples, str(c.path)),
                         reverse=True)
        kept = ordered[0]
        for copy in ordered[1:]:
            _compare_copies(kept, copy)
            account.set_aside.append(SetAside(str(copy.path), "duplicate", str(kept.path),
                                              copy.n_samples, "same eval id and created"))
        distinct.append(kept)

    cells: dict[tuple[str, ...], list[_Log]] = {}
    for log in distinct:
        cells.setdefault(log.cell_key, []).append(log)
    frames: list[pl.DataFrame] = []
    for attempts in cells.values():
        # each (sample, epoch) from the best attempt holding it: a successful one before an
        # unfinished one, then the newest (a resumed run re-ran or reused it)
        ordered = sorted(attempts, key=lambda a: a.order, reverse=True)
        best = ordered[0]
        taken: pl.DataFrame | None = None
        for attempt in ordered:
            part = attempt.frame
            if taken is not None:
                part = part.join(taken, on=["sample_id", "epoch"], how="anti")
            ids = part.select("sample_id", "epoch").unique()
            unused = attempt.n_samples - ids.height
            if part.height or attempt is best:
                account.counted.append(str(attempt.path))
                if not part.height:
                    account.empty.append(str(attempt.path))
                frames.append(part)
                if unused:
                    account.set_aside.append(SetAside(
                        str(attempt.path), "partly superseded", str(best.path), unused,
                        "samples a later or successful attempt of the same cell holds"))
            else:
                account.set_aside.append(SetAside(
                    str(attempt.path), "superseded", str(best.path), unused,
                    f"an earlier {attempt.header.get('status')} attempt of the same cell"))
            taken = ids if taken is None else pl.concat([taken, ids])
    return frames


def load_results(paths: LogPaths, *, recursive: bool = True,
                 skip_bad_logs: bool = False) -> Results:
    """Read every Inspect log under ``paths``, each (cell, sample, epoch) once.

    What counts once (:data:`COUNTING_RULE`): a log copied under a second name is the same
    run (same eval id and creation time) and is set aside, after checking that both copies
    agree on every sample (:class:`DuplicateLogError` if not); the attempts of one cell
    (an interrupted eval and its resumption, a failed eval and its retry: the same task,
    arguments, model, solver, generation config and eval metadata, as an eval set tells
    tasks apart) give each sample once, from the newest successful attempt that holds it,
    else from the newest attempt; an attempt left with nothing to give is superseded. The
    :class:`LogAccount` says what was set aside, so every output can state it.

    Args:
        paths: A log file, a directory (searched), or a sequence of either.
        recursive: Search directories recursively.
        skip_bad_logs: Skip a log that cannot be read and list it in the account, instead
            of raising :class:`LogReadError`.
    """
    account = LogAccount()
    logs: list[_Log] = []
    seen: set[Path] = set()
    for path in list_logs(paths, recursive=recursive):
        if path.resolve() in seen:  # the same file named twice is one file, not a copy
            continue
        seen.add(path.resolve())
        try:
            with _logfiles.paused_gc():  # parsed logs hold no cycles (issue 51 item 9)
                loaded = _load(path)
                frame = None if loaded is None else _frame(*loaded, remote_logs.display(path))
        except LogReadError as exc:
            if not skip_bad_logs:
                raise
            account.set_aside.append(SetAside(remote_logs.display(path), "unreadable",
                                              detail=exc.reason))
            continue
        if loaded is None or frame is None:
            account.set_aside.append(SetAside(remote_logs.display(path), "not a log",
                                              detail="JSON without an Inspect eval header"))
            continue
        logs.append(_Log(path, loaded[0], frame))
    frames = _dedupe(logs, account)
    kept = [f for f in frames if f.height]
    frame = pl.concat(kept, how="vertical", rechunk=False) if kept else _empty()
    account.samples = frame.select("log_file", "sample_id", "epoch").unique().height
    return Results(frame, account)


def kept_samples(paths: LogPaths, *, recursive: bool = True
                 ) -> tuple[set[tuple[str, str, int]], LogAccount]:
    """The ``(log_file, sample_id, epoch)`` keys :func:`load_results` keeps (each sample
    once, copies and superseded attempts set aside), with its account.

    Why: a summary that reads per-sample records (score metadata, transcripts) file by file
    must count the same samples the report does, however often a run was resumed or copied.
    """
    results = load_results(paths, recursive=recursive)
    keys = {(str(f), str(s), int(e)) for f, s, e in
            results.frame.select("log_file", "sample_id", "epoch").unique().iter_rows()}
    return keys, results.account


def _empty() -> pl.DataFrame:
    return pl.DataFrame(schema=SCHEMA)


def read_headers(paths: LogPaths, *, recursive: bool = True) -> pl.DataFrame:
    """One row per log file with its eval-level columns (``status``, ``eval_metadata``, ...).

    Unlike :func:`read_results` a log with no samples (just started, or failed before any
    sample) still has its row, so run bookkeeping (which study cells are complete) can read
    every log through this module. An unreadable (half-written) file is skipped.
    """
    rows: list[dict[str, Any]] = []
    for path in list_logs(paths, recursive=recursive):
        try:
            if path.suffix == ".eval":
                header: dict[str, Any] | None = _read_eval_zip(path)[0]
            else:
                parsed = _read_json_log(path)
                header = None if parsed is None else parsed[0]
        except Exception:  # a log being written, or not a log: absent for bookkeeping
            continue
        if header is not None:
            rows.append(_eval_values(header, remote_logs.display(path)))
    if not rows:
        return pl.DataFrame(schema={"log_file": pl.String, "status": pl.String,
                                    "eval_metadata": pl.String})
    return pl.DataFrame(rows, infer_schema_length=None)


def read_task_identities(paths: LogPaths, *, recursive: bool = True) -> pl.DataFrame:
    """One row per readable log: ``log_file``, Inspect's ``task_id`` and the eval-set task
    ``identifier`` (what ``eval_set`` pairs a task with its logs by).

    Why here: the study runner (:mod:`harness.factorial.selection`) resumes and prunes
    cells by these two values, and every log is read through this module. The identifier
    is computed by Inspect from its own header object, so this reads headers with Inspect's
    reader (slower than :func:`read_headers`, and only wanted for run bookkeeping). An
    unreadable (half-written) file is skipped, as in :func:`read_headers`.
    """
    from inspect_ai.log import read_eval_log

    from harness.inspect_compat import log_task_identifier

    rows: list[dict[str, Any]] = []
    for path in list_logs(paths, recursive=recursive):
        try:
            header = read_eval_log(str(remote_logs.local(path)), header_only=True)
            identifier = log_task_identifier(header)
        except Exception:  # a log being written, or not a log: absent for bookkeeping
            continue
        rows.append({"log_file": remote_logs.display(path), "task_id": header.eval.task_id,
                     "identifier": identifier})
    return pl.DataFrame(rows, schema={"log_file": pl.String, "task_id": pl.String,
                                      "identifier": pl.String})


def read_results(paths: LogPaths, *, recursive: bool = True) -> pl.DataFrame:
    """Read every Inspect log under ``paths`` into one tidy frame (see :data:`SCHEMA`),
    each (run, sample, epoch) once: :func:`load_results`'s frame, without its account.

    Files are read one at a time in this process: a spawn-based process pool was measured
    slower on 100k samples in 20 files (its start-up and pickling cost more than the
    ~0.1 s per file it parallelises), and it raises peak memory. The per-file frames are
    concatenated without a rechunk, which saves a copy of the whole frame.

    Args:
        paths: A log file, a directory (searched), or a sequence of either.
        recursive: Search directories recursively.
    """
    return load_results(paths, recursive=recursive).frame


def scan_results(paths: LogPaths, *, recursive: bool = True) -> pl.LazyFrame:
    """The results as a LazyFrame, so callers can build a pipeline over them."""
    return read_results(paths, recursive=recursive).lazy()


# --------------------------------------------------------------------------- metadata


def _typed_series(name: str, values: list[Any]) -> pl.Series:
    """A column for decoded JSON values: scalars keep their type, anything mixed/nested
    becomes JSON text so no value is lost or coerced silently."""
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int} or kinds <= {float, int} or kinds <= {str} or kinds <= {bool}:
        return pl.Series(name, values, strict=False)
    return pl.Series(name, [None if v is None else _dumps(v) for v in values], pl.String())


def with_metadata_columns(
    df: pl.DataFrame,
    keys: Sequence[str] | None = None,
    *,
    source: str = "eval_metadata",
    prefix: str = "",
) -> pl.DataFrame:
    """Add one column per key of a JSON column (e.g. factor levels in ``eval_metadata``).

    Each distinct JSON value is decoded once, so this costs per eval, not per row.

    Args:
        df: A results frame.
        keys: Keys to extract; None extracts every key found (sorted).
        source: The JSON column: ``eval_metadata``, ``task_args``, ``model_args``,
            ``generate_config`` or ``sample_metadata``.
        prefix: Prepended to the new column names.

    Raises:
        ValueError: A new column would overwrite an existing one (use ``prefix``).
    """
    distinct = df.get_column(source).drop_nulls().unique(maintain_order=True).to_list()
    decoded = [_loads(v.encode()) for v in distinct]
    if keys is None:
        keys = sorted({k for d in decoded if isinstance(d, dict) for k in d})
    names = [prefix + key for key in keys]
    clash = [name for name in names if name in df.columns]
    if clash:
        raise ValueError(f"columns already exist: {clash}; pass prefix=")
    columns = []
    for key, name in zip(keys, names, strict=True):
        values = [d.get(key) if isinstance(d, dict) else None for d in decoded]
        series = _typed_series(name, values)
        columns.append(
            pl.col(source).replace_strict(distinct, series, default=None, return_dtype=series.dtype)
            .alias(name)
        )
    return df.with_columns(columns)


# --------------------------------------------------------------------------- errored samples

POLICY_COLUMNS = ("errored", "counted", "errored_policy")
"""Columns :func:`apply_errored_policy` adds: the row's sample errored; the row enters means;
the policy applied to it."""


def _check_policy(policy: str, where: str) -> None:
    from harness.evalspec import ERRORED_POLICIES

    if policy not in ERRORED_POLICIES:
        raise ValueError(f"errored policy for {where} must be one of "
                         f"{', '.join(ERRORED_POLICIES)}, got {policy!r}")


def errored_policies(
    frame: pl.DataFrame,
    policy: ErroredPolicy | Mapping[str, ErroredPolicy] | None = None,
) -> pl.DataFrame:
    """One row per (``task``, ``score_key``) of ``frame``: ``errored_policy`` and
    ``lower_is_better``, from the task's ``eval.yaml`` unless ``policy`` overrides it.

    Args:
        frame: A results frame (needs ``task``; ``score_key`` is optional).
        policy: One policy for every task, a ``task -> policy`` mapping (tasks it does not
            name keep their own), or None (every task's own; ``zero`` without an eval.yaml).

    Raises:
        ValueError: An unknown policy, or ``zero`` asked for on a lower-is-better score.
    """
    from harness.evalspec import DEFAULT_ERRORED_POLICY, spec_for_task

    has_key = "score_key" in frame.columns
    pairs = (frame.select("task", "score_key") if has_key
             else frame.select("task").with_columns(pl.lit(None, pl.String()).alias("score_key")))
    rows = []
    for task, key in pairs.unique(maintain_order=True).iter_rows():
        found = spec_for_task(str(task)) if task is not None else None
        lower = found.lower_is_better(key) if found is not None and key is not None else False
        own = found.policy(key) if found is not None else DEFAULT_ERRORED_POLICY
        chosen = policy.get(task, own) if isinstance(policy, Mapping) else (policy or own)
        where = f"{task} {key}" if key else str(task)
        _check_policy(chosen, where)
        if chosen == "zero" and lower:
            raise ValueError(f"errored='zero' on {where}, which is lower-is-better: errored "
                             "samples scored 0 would beat every real result; use 'drop'")
        rows.append({"task": task, "score_key": key, "errored_policy": chosen,
                     "lower_is_better": lower})
    schema = {"task": pl.String(), "score_key": pl.String(), "errored_policy": pl.String(),
              "lower_is_better": pl.Boolean()}
    return pl.DataFrame(rows, schema=schema)


def apply_errored_policy(
    frame: pl.DataFrame,
    policy: ErroredPolicy | Mapping[str, ErroredPolicy] | None = None,
    *,
    response: str = "score_value",
    keep_dropped: bool = False,
) -> pl.DataFrame:
    """The frame with ``response`` counted under an explicit errored-sample policy.

    A row is *missing* when its sample errored (``error`` set) or it has no value. Under
    ``zero`` a missing row's response becomes 0.0 (an errored sample's value, if it has one,
    is not trusted either); under ``drop`` the row is removed (or, with ``keep_dropped``,
    kept with a null response so it can still be counted). Adds ``errored`` (the sample
    errored), ``counted`` (the row enters means) and ``errored_policy``. A frame that already
    carries ``errored_policy`` is returned as it is (the policy is applied once).

    Args:
        frame: A results frame, or any frame with ``response``, ``error`` and ``task``.
        policy: See :func:`errored_policies` (None: each task's eval.yaml, per score key).
        response: The column counted (``score_value``).
        keep_dropped: Keep dropped rows (response null, ``counted`` false).
    """
    if "errored_policy" in frame.columns:
        if policy is not None and not isinstance(policy, Mapping):
            applied = set(frame.get_column("errored_policy").drop_nulls().unique().to_list())
            if applied - {policy}:
                raise ValueError(f"the frame already has errored policy {sorted(applied)} "
                                 f"applied; cannot apply {policy!r} on top")
        return frame
    for column in (response, "error"):
        if column not in frame.columns:
            raise ValueError(f"column {column!r} not found (have: {frame.columns})")
    if "task" in frame.columns:
        table = errored_policies(frame, policy)
        on = ["task", "score_key"] if "score_key" in frame.columns else ["task"]
        if on == ["task"]:
            table = table.drop("score_key")
        out = frame.join(table.drop("lower_is_better"), on=on, how="left", nulls_equal=True,
                         maintain_order="left")
    else:
        from harness.evalspec import DEFAULT_ERRORED_POLICY

        single = policy if isinstance(policy, str) else DEFAULT_ERRORED_POLICY
        _check_policy(single, "the frame")
        out = frame.with_columns(pl.lit(single, pl.String()).alias("errored_policy"))
    errored = pl.col("error").is_not_null()
    missing = errored | pl.col(response).is_null()
    zero = pl.col("errored_policy") == "zero"
    out = out.with_columns(
        errored.alias("errored"),
        (~missing | zero).alias("counted"),
        pl.when(~missing).then(pl.col(response).cast(pl.Float64))
        .when(zero).then(pl.lit(0.0)).otherwise(pl.lit(None, pl.Float64())).alias(response),
    )
    return out if keep_dropped else out.filter(pl.col("counted"))


def with_unreported_keys(frame: pl.DataFrame,
                         keys: Sequence[str] | Mapping[str, Sequence[str]]) -> pl.DataFrame:
    """The frame plus rows under ``scorer/key`` for logs that never reported that key.

    A log in which no sample was scored by a dict-valued scorer (every sample errored)
    only knows the scorer's name, so its rows carry ``score_key = scorer``. A consumer that
    selects ``scorer/key`` would lose those errored samples; this adds a copy of each such
    row under every requested ``scorer/key`` (value null, error kept), so they are counted.

    Args:
        frame: A results frame.
        keys: Score keys (``scorer/key``) for every task, or ``task -> keys``.
    """
    wanted = (keys if isinstance(keys, Mapping)
              else {t: list(keys) for t in frame.get_column("task").unique().to_list()})
    extra = []
    for task, names in wanted.items():
        of_task = frame.filter(pl.col("task") == task)
        for key in names:
            scorer = key.split("/", 1)[0]
            if scorer == key:
                continue
            has = of_task.filter(pl.col("score_key") == key).get_column("log_file").unique()
            bare = of_task.filter((pl.col("score_key") == scorer)
                                  & pl.col("score_value").is_null()
                                  & ~pl.col("log_file").is_in(has.implode()))
            if bare.height:
                extra.append(bare.with_columns(pl.lit(key).alias("score_key")))
    return pl.concat([frame, *extra], how="vertical") if extra else frame


def errored_counts(frame: pl.DataFrame, by: Sequence[str] = ("task",)) -> pl.DataFrame:
    """Per ``by`` group: ``n_samples`` (sample x epoch), ``n_errored`` (samples whose run
    errored) and ``n_unscored`` (samples with a null score but no error), counted on the
    raw frame (before :func:`apply_errored_policy`), each sample once however many score
    keys it has."""
    sample = pl.struct("log_file", "sample_id", "epoch")
    errored = pl.col("error").is_not_null()
    value = "score_value"
    return (frame.group_by(list(by), maintain_order=True)
            .agg(sample.n_unique().alias("n_samples"),
                 sample.filter(errored).n_unique().alias("n_errored"),
                 sample.filter(~errored & pl.col(value).is_null()).n_unique()
                 .alias("n_unscored")))


# ----------------------------------------------------------------- recipe training logs

TRAIN_LOG_SCHEMA: dict[str, pl.DataType] = {
    "step": pl.Int64(), "loss": pl.Float64(), "tokens": pl.Int64(), "flops": pl.Int64(),
    "tokens_total": pl.Int64(), "flops_total": pl.Int64(), "wall_s": pl.Float64(),
}
"""The columns every recipe's ``train_log.jsonl`` has (a recipe may add more)."""


def read_product(product_dir: PathLike) -> dict[str, Any]:
    """A recipe product's ``product.json`` (recipe, options, seed, hash, corpus, totals)."""
    path = Path(product_dir) / "product.json"
    if not path.is_file():
        raise FileNotFoundError(f"{product_dir} is not a recipe product (no product.json)")
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def read_training_log(product_dir: PathLike) -> pl.DataFrame:
    """A recipe product's training log (``train_log.jsonl``) as a frame, one row per logged
    step, with the product's ``recipe``, ``seed`` and ``hash`` (from ``product.json``,
    when present) and each option as a text column ``opt_<name>``, so the logs of several
    products concatenate into one frame of loss curves."""
    folder = Path(product_dir)
    path = folder / "train_log.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no train_log.jsonl")
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    frame = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(
        schema=TRAIN_LOG_SCHEMA)
    frame = frame.with_columns(
        pl.col(name).cast(dtype) for name, dtype in TRAIN_LOG_SCHEMA.items()
        if name in frame.columns)
    if (folder / "product.json").is_file():
        product = read_product(folder)
        frame = frame.with_columns(
            pl.lit(str(product.get("recipe"))).alias("recipe"),
            pl.lit(int(product.get("seed", 0))).alias("seed"),
            pl.lit(str(product.get("hash"))).alias("hash"),
            *(pl.lit(str(value)).alias(f"opt_{key}")
              for key, value in sorted((product.get("options") or {}).items())),
        )
    return frame


# --------------------------------------------------------------------------- run comparison
# (added for ``harness compare`` / ``harness rescore``, issue 51: what the results frame
# leaves out because it is per run or is text, read here so no other module parses logs)


def read_eval_specs(paths: LogPaths, *, recursive: bool = True) -> list[dict[str, Any]]:
    """Each log's eval spec (the header's ``eval`` object, as Inspect wrote it) with its
    ``log_file``; an unreadable file or a ``.json`` that is no log is left out.

    Why: a comparison must know which scorers (with their options) made each score key,
    and the dataset and revision a run recorded; the results frame keeps none of that.
    """
    out: list[dict[str, Any]] = []
    for path in list_logs(paths, recursive=recursive):
        try:
            loaded = _load(path)
        except LogReadError:
            continue
        if loaded is not None:
            out.append({"log_file": remote_logs.display(path),
                        **(loaded[0].get("eval") or {})})
    return out


def _as_text(value: Any) -> str | None:
    """A sample's input or target as one text (chat messages joined by role)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict):
                content = item.get("content")
                if isinstance(content, list):
                    content = " ".join(str(c.get("text", "")) if isinstance(c, dict) else str(c)
                                       for c in content)
                role = item.get("role")
                parts.append(f"{role}: {content}" if role else str(content))
            else:
                parts.append(str(item))
        return "\n".join(parts)
    return _dumps(value)


def read_sample_texts(paths: LogPaths, *, recursive: bool = True) -> pl.DataFrame:
    """One row per (log, sample, epoch): ``input`` and ``target`` as text, from the sample
    summaries (no full sample is read). Chat inputs are joined as ``role: content`` lines;
    a list target is its items joined by newlines.

    Why: a comparison shows the items that flipped with what was asked and expected, and
    hashes them to tell whether two runs saw the same data under the same ids.
    """
    rows: list[dict[str, Any]] = []
    for path in list_logs(paths, recursive=recursive):
        loaded = _load(path)
        if loaded is None:
            continue
        latest: dict[tuple[str, int], dict[str, Any]] = {}
        for sample in loaded[1]:
            latest[(str(sample["id"]), int(sample["epoch"]))] = sample
        for (sample_id, epoch), sample in latest.items():
            rows.append({"log_file": remote_logs.display(path), "sample_id": sample_id,
                         "epoch": epoch,
                         "input": _as_text(sample.get("input")),
                         "target": _as_text(sample.get("target"))})
    schema = {"log_file": pl.String(), "sample_id": pl.String(), "epoch": pl.Int64(),
              "input": pl.String(), "target": pl.String()}
    return pl.DataFrame(rows, schema=schema)


def read_sample_output(log_file: PathLike, sample_id: str | int, epoch: int = 1) -> str | None:
    """The model's final completion for one sample (``output.completion``), or None.

    Why: a scorer's ``answer`` is often empty; a comparison of flipped items shows what
    each run actually answered. Reads only that sample's member of a ``.eval`` zip.
    """
    try:
        sample = _sample_json(log_file, sample_id, epoch)
    except KeyError:
        return None
    output = sample.get("output") or {}
    completion = output.get("completion") if isinstance(output, dict) else None
    return str(completion) if completion else None


def read_inspect_log(path: PathLike) -> Any:
    """A log as Inspect's own ``EvalLog`` object (every sample, full), for the one use that
    needs Inspect's objects rather than rows: re-scoring stored outputs with Inspect's
    ``score`` API (``harness rescore``). Imports ``inspect_ai`` only when called; the
    frame readers above never do."""
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path))
