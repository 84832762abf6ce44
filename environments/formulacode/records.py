"""FormulaCode task records: one schema for both published dataset variants (spec §2).

The paper-era ``formulacode-all`` rows (``final_md``, ``pr_base_sha``,
``pr_merge_commit_sha``, ...) and the newer fc-data/Harbor rows (``instructions``,
``base_commit``, ``gt_hash``, ``owner``/``repo``/``issue_number``) both normalise to
:class:`TaskRecord`; ``task_id`` is trusted as given (§11.7). Records load from a local
parquet or JSONL file, from an explicit Hugging Face dataset id (only then is anything
downloaded, through ``datasets``), or from the offline pack (:mod:`.pack`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from environments.datafiles import DataFileError, check_unique_ids, read_records

CLASSIFICATIONS = (
    "use_better_algorithm", "use_better_data_structure_and_layout", "use_lower_level_system",
    "accept_less_precise_solution", "use_parallelization", "remove_or_reduce_work",
    "cache_and_reuse", "do_it_earlier_batch_throttle", "scale_platform",
    "database_and_storage_tuning", "micro_optimizations", "io_and_latency_hiding",
    "use_higher_level_system", "uncategorized",
)
DIFFICULTIES = ("easy", "medium", "hard", "unknown")
HF_DATASET = "formulacode/formulacode-all"


@dataclass(frozen=True)
class TaskRecord:
    """One task in the paper-era column names (the newer names map onto these)."""

    task_id: str
    repo_name: str
    container_name: str
    image_name: str
    patch: str
    final_md: str
    pr_base_sha: str
    pr_merge_commit_sha: str
    pr_merged_at: str = ""
    difficulty: str = "unknown"
    classification: str = "uncategorized"
    pr_number: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def container_to_image(container_name: str) -> str:
    """Docker Hub reference of a task image: tag = container name with ':' -> '--' (§2.1)."""
    return f"formulacode/all:{container_name.replace(':', '--')}"


def task_id_from_container(container_name: str, counter: int) -> str:
    """The publisher's id derivation (§2.3): strip the tag, drop the sha, split the
    remaining dash pieces in half into owner and repo, append the per-repo counter."""
    name = container_name.split(":")[0]
    pieces = name.split("-")[:-1]
    half = len(pieces) // 2
    return f"{'-'.join(pieces[:half])}_{'-'.join(pieces[half:])}_{counter}"


def _norm_label(value: Any, allowed: tuple[str, ...], default: str) -> str:
    text = str(value or "").strip().lower().split(".")[-1]
    return text if text in allowed else default


def normalize(row: dict[str, Any]) -> TaskRecord:
    """A row of either schema as a :class:`TaskRecord` (raises KeyError on missing core
    fields: patch, instructions, base commit)."""
    row = dict(row)
    if "final_md" not in row and "instructions" in row:  # fc-data / Harbor schema
        owner, repo = str(row["owner"]), str(row["repo"])
        repo_name = row.get("repo_name") or f"{owner}/{repo}"
        number = int(row["issue_number"]) if row.get("issue_number") is not None else None
        task_id = str(row.get("task_id") if row.get("task_id") is not None else number)
        base, merge = str(row["base_commit"]), str(row.get("gt_hash", ""))
        final_md, merged_at = str(row["instructions"]), str(row.get("date", ""))
        difficulty_default = "hard"  # the Harbor adapter's default
    else:
        repo_name = str(row["repo_name"])
        number = int(row["pr_number"]) if row.get("pr_number") is not None else None
        task_id = str(row["task_id"])
        base, merge = str(row["pr_base_sha"]), str(row.get("pr_merge_commit_sha", ""))
        final_md, merged_at = str(row["final_md"]), str(row.get("pr_merged_at", ""))
        difficulty_default = "unknown"
    container = str(row.get("container_name") or
                    f"{repo_name.replace('/', '-').lower()}-{base}:final")
    known = {"task_id", "repo_name", "container_name", "image_name", "patch", "final_md",
             "instructions", "pr_base_sha", "base_commit", "pr_merge_commit_sha", "gt_hash",
             "pr_merged_at", "date", "difficulty", "classification", "pr_number",
             "issue_number", "owner", "repo"}
    return TaskRecord(
        task_id=task_id,
        repo_name=str(repo_name),
        container_name=container,
        image_name=str(row.get("image_name") or container_to_image(container)),
        patch=str(row["patch"]),
        final_md=final_md,
        pr_base_sha=base,
        pr_merge_commit_sha=merge,
        pr_merged_at=merged_at,
        difficulty=_norm_label(row.get("difficulty"), DIFFICULTIES, difficulty_default),
        classification=_norm_label(row.get("classification"), CLASSIFICATIONS, "uncategorized"),
        pr_number=number,
        extra={k: v for k, v in row.items() if k not in known},
    )


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Rows of a local ``.parquet``, ``.jsonl``/``.json`` file, or a folder of parquet
    files (a dataset snapshot's ``<config>/train-*.parquet``)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(path.rglob("*.parquet"))
        if not files:
            raise FileNotFoundError(f"no parquet files under {path}")
        return [row for f in files for row in read_rows(f)]
    if path.suffix == ".parquet":
        import polars as pl

        return pl.read_parquet(path).to_dicts()
    if path.suffix in (".jsonl", ".json"):
        # a .json of JSON lines is read as lines (hub exports do this): by its first byte
        numbered = read_records(path, json_lines=path.suffix == ".jsonl"
                                or not _starts_with_array(path))
        for index, (line, row) in enumerate(numbered):
            if not isinstance(row, dict):
                raise DataFileError(path, f"record {index} is a {type(row).__name__}, "
                                          "expected a JSON object", line)
        return [row for _, row in numbered]
    raise DataFileError(path, "unsupported dataset file: use .parquet, .jsonl or .json")


def _starts_with_array(path: Path) -> bool:
    """Whether the file's first non-blank byte opens a JSON array (a missing or unreadable
    file answers False; :func:`read_records` then names what is wrong with it)."""
    try:
        with open(path, "rb") as handle:
            return handle.read(4096).lstrip().startswith(b"[")
    except OSError:
        return False


def load_records(source: str | Path, config: str = "default",
                 split: str = "train") -> list[TaskRecord]:
    """Task records from ``source``: ``"pack"`` (the offline pack), a local file/folder, or
    a Hugging Face dataset id like ``formulacode/formulacode-all`` (downloads; needs the
    ``datasets`` package and a reachable hub)."""
    if str(source) == "pack":
        from environments.formulacode.pack import pack_records

        return [normalize(r) for r in pack_records()]
    if Path(source).exists():
        records = [normalize(r) for r in read_rows(source)]
        check_unique_ids(source, records, lambda r: r.task_id, what="record")
        return records
    if "/" in str(source) and not str(source).startswith((".", "/")):
        try:
            import datasets
        except ImportError as exc:  # pragma: no cover - datasets is optional
            raise RuntimeError("loading a hub dataset id needs `pip install datasets`") from exc
        ds = datasets.load_dataset(str(source), config, split=split)
        return [normalize(dict(r)) for r in ds]
    raise FileNotFoundError(f"{source}: not a file, folder, 'pack' or a hub dataset id")
