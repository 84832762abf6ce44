"""MedVersa loader, schema validation, shipped sample set and metric definitions."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from environments.medversa import load_dataset, summarize, to_case, validate_record
from environments.medversa.load import SAMPLE_PATH, load_records
from environments.medversa.metrics import (
    avg_score,
    exact_match,
    fluency_entropy,
    lenient_match,
    locality_agreement,
    ngram_entropy,
    normalize_answer,
    teacher_forced,
    token_accuracy,
)
from environments.medversa.schema import RecordError

REPO = Path(__file__).resolve().parents[3]
REAL_TEST = (REPO / "../shared/reference-data/medversa/test.json").resolve()
needs_real = pytest.mark.skipif(not REAL_TEST.is_file(),
                                reason="reference MedVersa test.json not present next to the repo")


def _run_cli(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "environments.medversa.load", str(path), "--json"],
                          cwd=REPO, capture_output=True, text=True, timeout=60)


@needs_real
def test_loader_reads_all_1000_reference_records() -> None:
    summary = summarize(REAL_TEST)
    assert summary["records"] == 1000
    assert summary["subjects"] == 20
    assert summary["errors"] == []
    cases = load_dataset(REAL_TEST)
    assert len({c.id for c in cases}) == 1000
    first = json.loads(REAL_TEST.read_text())[0]
    case = cases[0]
    assert (case.prompt, case.target_new, case.rephrase_prompt) == (
        first["prompt"], first["target_new"], first["rephrase_prompt"])
    assert case.locality[0].prompt == first["locality_prompt"]


@needs_real
def test_cli_on_reference_file() -> None:
    proc = _run_cli(REAL_TEST)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"records": 1000, "subjects": 20, "errors": []}


def test_cli_names_record_and_field_of_a_malformed_record(tmp_path: Path) -> None:
    rows = json.loads(SAMPLE_PATH.read_text())[:5]
    del rows[3]["rephrase_prompt"]
    rows[4]["locality_id"] = "not-an-int"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(rows))
    proc = _run_cli(bad)
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["records"] == 5
    assert len(out["errors"]) == 2
    assert f"record 3 (id={rows[3]['id']})" in out["errors"][0]
    assert "'rephrase_prompt'" in out["errors"][0] and "missing" in out["errors"][0]
    assert "record 4" in out["errors"][1] and "'locality_id'" in out["errors"][1]
    with pytest.raises(RecordError, match="record 3 .*rephrase_prompt"):
        load_records(bad)


def test_non_object_and_empty_fields_are_errors() -> None:
    assert "expected an object" in str(validate_record(["x"], 7)[0])
    row: dict[str, Any] = json.loads(SAMPLE_PATH.read_text())[0]
    row["target_new"] = "  "
    errors = validate_record(row, 0)
    assert [e.field for e in errors] == ["target_new"]


def test_shipped_sample_set_is_valid_and_well_formed() -> None:
    summary = summarize(SAMPLE_PATH)
    assert summary["errors"] == [] and summary["records"] >= 60 and summary["subjects"] == 20
    cases = load_dataset("sample")
    assert len({c.id for c in cases}) == len(cases)
    edit_prompts = {c.prompt for c in cases}
    loc_prompts = {q.prompt for c in cases for q in c.locality}
    assert not edit_prompts & loc_prompts  # no locality question is also an edit question
    assert all(c.target_new != c.ground_truth for c in cases)
    assert all(c.rephrase_prompt != c.prompt for c in cases)


def test_medcf_and_medfe_records_map_to_their_locality_kinds() -> None:
    medcf = {"prompt": "p", "target_new": "t", "subject": "s", "ground_truth": "g",
             "rephrase_prompt": "r"}
    for kind in ("target", "mapping", "struc", "tokenSem"):
        medcf[f"locality_{kind}_prompt"] = f"{kind}?"
        medcf[f"locality_{kind}_ground_truth"] = kind
    case = to_case(medcf, 0)
    assert [q.kind for q in case.locality] == ["locality_target", "locality_mapping",
                                              "locality_struc", "locality_tokenSem"]
    medfe = {"subject": "s", "prompt": "p", "target_new": "long", "rephrase_prompt": "r",
             "locality_topic_prompt": "a", "locality_topic_ground_truth": "b",
             "locality_tokenSem_prompt": "c", "locality_tokenSem_ground_truth": "d"}
    fe = to_case(medfe, 2)
    assert fe.ground_truth == "long" and len(fe.locality) == 2
    del medfe["locality_topic_ground_truth"]
    with pytest.raises(RecordError, match="locality_topic_ground_truth"):
        to_case(medfe, 2)


def test_environment_never_imports_inspect() -> None:
    code = ("import sys, environments.medversa.load, environments.medversa.metrics; "
            "print(any(m.startswith('inspect_ai') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


# --- metrics ---------------------------------------------------------------------------

def _words(text: str) -> list[int]:
    """A toy tokenizer: one id per whitespace word (BOS = 0 first)."""
    return [0] + [sum(map(ord, w)) for w in text.split()]


def test_teacher_forced_masks_exactly_the_target_positions() -> None:
    tf = teacher_forced(_words, "What is the drug", "of choice")
    ids = _words("What is the drug of choice")
    assert tf.inputs == ids[:-1] and tf.labels == ids[1:]
    # prompt = BOS + 4 words -> L_p = 5: positions 4 and 5 predict "of", "choice"
    assert tf.mask == [0, 0, 0, 0, 1, 1]
    assert [lab for lab, m in zip(tf.labels, tf.mask, strict=True) if m] == ids[5:]


def test_token_accuracy_and_locality_count_only_masked_positions() -> None:
    labels, mask = [5, 6, 7, 8], [0, 0, 1, 1]
    assert token_accuracy([0, 0, 7, 8], labels, mask) == 1.0
    assert token_accuracy([5, 6, 7, 0], labels, mask) == 0.5
    pre, post = [1, 2, 3, 4], [9, 9, 3, 0]
    assert locality_agreement(pre, post, mask) == 0.5
    with pytest.raises(ValueError):
        token_accuracy([1], [1], [0])


def test_ngram_entropy_and_fluency_formula() -> None:
    assert ngram_entropy(["a", "b", "c", "d", "e"], 2) == pytest.approx(2.0)  # 4 distinct
    assert ngram_entropy(["a", "a", "a", "a"], 2) == 0.0
    text = "one two three four five six seven eight nine"
    h2, h3 = math.log2(8), math.log2(7)
    assert fluency_entropy(text) == pytest.approx(h2 / 3 + 2 * h3 / 3)
    assert fluency_entropy("the the the the the the") == 0.0


def test_avg_weights_locality_half() -> None:
    assert avg_score(100, 0, 0) == 25
    assert avg_score(0, 0, 100) == 50
    assert avg_score(80, 60, 90) == pytest.approx(80)


def test_black_box_text_match() -> None:
    assert normalize_answer("  The Radial-Nerve! ") == "radial nerve"
    assert exact_match("the radial nerve.", "Radial nerve")
    assert not exact_match("radial nerve palsy", "Radial nerve")
    assert lenient_match("It is the radial nerve, usually", "Radial nerve")
    assert not lenient_match("ulnar", "Radial nerve")
