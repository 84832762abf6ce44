"""Record schemas of MedVersa (and the MedCF / MedFE variants) and one evaluation view.

Every protocol needs the same four things per record: the edit (prompt -> target_new), the
generality query (a paraphrase expecting target_new) and one or more locality queries whose
pre-edit behaviour must survive. :class:`EditCase` is that view; :func:`to_case` builds it
from any of the three source schemas, so editors and scorers never look at raw field names.
Validation names the record (index and id) and the field, because a malformed record in a
6,000-row file is otherwise found only by a KeyError deep inside an evaluation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Format = Literal["medversa", "medcf", "medcf_new", "medfe"]

MEDVERSA_FIELDS: dict[str, type] = {
    "prompt": str,
    "ground_truth": str,
    "target_new": str,
    "rephrase_prompt": str,
    "subject_name": str,
    "topic_name": str,
    "id": int,
    "locality_prompt": str,
    "locality_ground_truth": str,
    "locality_subject_name": str,
    "locality_topic_name": str,
    "locality_id": int,
}
MEDCF_LOCALITY = ("target", "mapping", "struc", "tokenSem")
MEDCF_FIELDS: dict[str, type] = {
    "prompt": str, "target_new": str, "subject": str, "ground_truth": str,
    "rephrase_prompt": str,
    **{f"locality_{k}_{part}": str for k in MEDCF_LOCALITY for part in ("prompt", "ground_truth")},
}
MEDCF_NEW_LOCALITY = ("relation", "head", "head_relation")
MEDCF_NEW_FIELDS: dict[str, type] = {
    "prompt": str, "target_new": str, "subject": str, "ground_truth": str,
    "rephrase_prompt": str,
    **{f"locality_{k}_prompt": str for k in MEDCF_NEW_LOCALITY},
    **{f"locality_{k}_prompt_ground_truth": str for k in MEDCF_NEW_LOCALITY},
}
MEDFE_LOCALITY = ("topic", "tokenSem")
MEDFE_FIELDS: dict[str, type] = {
    "subject": str, "prompt": str, "target_new": str, "rephrase_prompt": str,
    **{f"locality_{k}_{part}": str for k in MEDFE_LOCALITY for part in ("prompt", "ground_truth")},
}
FIELDS: dict[str, dict[str, type]] = {
    "medversa": MEDVERSA_FIELDS, "medcf": MEDCF_FIELDS,
    "medcf_new": MEDCF_NEW_FIELDS, "medfe": MEDFE_FIELDS,
}


class RecordError(ValueError):
    """A malformed record: says which record (index, id) and which field."""

    def __init__(self, index: int, record_id: Any, field_name: str, problem: str) -> None:
        self.index, self.record_id, self.field, self.problem = index, record_id, field_name, problem
        super().__init__(f"record {index} (id={record_id}): field {field_name!r}: {problem}")


@dataclass(frozen=True)
class LocalityQuery:
    """One locality probe: its kind (sub-metric name), prompt and recorded answer."""

    kind: str
    prompt: str
    ground_truth: str


@dataclass(frozen=True)
class EditCase:
    """One evaluation record in the common view (spec §1.1, "evaluation view")."""

    id: str
    prompt: str
    target_new: str
    ground_truth: str
    rephrase_prompt: str
    subject: str
    locality: tuple[LocalityQuery, ...]
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_record(self) -> dict[str, Any]:
        """A JSON-able dict (what Inspect sample metadata carries)."""
        return {
            "id": self.id, "prompt": self.prompt, "target_new": self.target_new,
            "ground_truth": self.ground_truth, "rephrase_prompt": self.rephrase_prompt,
            "subject": self.subject,
            "locality": [[q.kind, q.prompt, q.ground_truth] for q in self.locality],
            "meta": self.meta,
        }

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> EditCase:
        """Inverse of :meth:`to_record`."""
        return cls(
            id=str(rec["id"]), prompt=rec["prompt"], target_new=rec["target_new"],
            ground_truth=rec["ground_truth"], rephrase_prompt=rec["rephrase_prompt"],
            subject=rec["subject"],
            locality=tuple(LocalityQuery(k, p, g) for k, p, g in rec["locality"]),
            meta=dict(rec.get("meta", {})),
        )


def detect_format(record: dict[str, Any]) -> Format:
    """Which schema a record follows, from its distinctive fields."""
    if "locality_prompt" in record or "subject_name" in record:
        return "medversa"
    if "locality_relation_prompt" in record:
        return "medcf_new"
    if "locality_topic_prompt" in record:
        return "medfe"
    return "medcf" if "locality_target_prompt" in record else "medversa"


def validate_record(record: Any, index: int, fmt: Format | None = None) -> list[RecordError]:
    """Every problem of one record (empty list when it is well formed)."""
    if not isinstance(record, dict):
        got = type(record).__name__
        return [RecordError(index, None, "<record>", f"expected an object, got {got}")]
    fmt = fmt or detect_format(record)
    rid = record.get("id", record.get("prompt", "?") if fmt != "medversa" else "?")
    errors: list[RecordError] = []
    for name, kind in FIELDS[fmt].items():
        if name not in record:
            errors.append(RecordError(index, rid, name, "missing"))
            continue
        value = record[name]
        if kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        else:
            ok = isinstance(value, str)
        if not ok:
            errors.append(RecordError(index, rid, name, f"expected {kind.__name__}, got "
                                      f"{type(value).__name__}"))
        elif kind is str and not value.strip():
            errors.append(RecordError(index, rid, name, "empty string"))
    return errors


def to_case(record: dict[str, Any], index: int, fmt: Format | None = None) -> EditCase:
    """The evaluation view of a validated record (raises :class:`RecordError` if malformed)."""
    fmt = fmt or detect_format(record)
    errors = validate_record(record, index, fmt)
    if errors:
        raise errors[0]
    if fmt == "medversa":
        locality: tuple[LocalityQuery, ...] = (
            LocalityQuery("locality", record["locality_prompt"], record["locality_ground_truth"]),
        )
        meta = {k: record[k] for k in ("subject_name", "topic_name", "locality_id",
                                       "locality_subject_name", "locality_topic_name")}
        return EditCase(str(record["id"]), record["prompt"], record["target_new"],
                        record["ground_truth"], record["rephrase_prompt"],
                        record["subject_name"], locality, meta)
    if fmt == "medcf":
        locality = tuple(LocalityQuery(f"locality_{k}", record[f"locality_{k}_prompt"],
                                       record[f"locality_{k}_ground_truth"])
                         for k in MEDCF_LOCALITY)
    elif fmt == "medcf_new":
        locality = tuple(LocalityQuery(f"locality_{k}", record[f"locality_{k}_prompt"],
                                       record[f"locality_{k}_prompt_ground_truth"])
                         for k in MEDCF_NEW_LOCALITY)
    else:  # medfe: the loader sets ground_truth = target_new (spec §1.3)
        locality = tuple(LocalityQuery(f"locality_{k}", record[f"locality_{k}_prompt"],
                                       record[f"locality_{k}_ground_truth"])
                         for k in MEDFE_LOCALITY)
    ground_truth = record["target_new"] if fmt == "medfe" else record["ground_truth"]
    return EditCase(f"{fmt}-{index}", record["prompt"], record["target_new"], ground_truth,
                    record["rephrase_prompt"], record["subject"], locality)
