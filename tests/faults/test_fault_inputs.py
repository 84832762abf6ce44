"""Fault injection on inputs: study files and data files a user gets wrong.

Each case is one the old code accepted silently or answered with a traceback: a key stated
twice (the second won), nested YAML aliases (tens of seconds and gigabytes to reject), two
levels binding one value, an unknown intervention that passed ``--dry-run``, MedVersa ids
used twice, a bad JSON line reported on the wrong line, a truncated, empty, non-UTF-8,
missing or folder path with a raw traceback.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from environments.datafiles import DataFileError
from environments.formulacode.records import load_records as load_formulacode
from environments.medversa.load import load_records, read_raw
from harness.factorial.run import plan, run_study
from harness.factorial.study import StudyError, load_study, parse_study

STUDY = textwrap.dedent("""\
    name: inputs
    response:
      tasks:
        - name: harness/arithmetic
          args: {n: 4, seed: 0, agent: react}
      scores: [exact_integer]
    factors:
      - name: model
        binds_to: model
        levels:
          - {label: oracle, value: scripted/arith-oracle}
          - {label: ltr, value: scripted/arith-left-to-right}
    """)


def test_a_key_stated_twice_is_an_error_with_both_lines() -> None:
    text = STUDY + "limit: 4\nlimit: 1000\n"
    with pytest.raises(StudyError) as caught:
        parse_study(text, "study.yaml")
    assert str(caught.value).startswith("study.yaml:14: limit: stated twice (lines 13 and 14)")


def test_a_nested_key_stated_twice_is_found_too() -> None:
    text = STUDY.replace("args: {n: 4, seed: 0, agent: react}",
                         "args: {n: 4, seed: 0, n: 40}")
    with pytest.raises(StudyError, match=r"response\.tasks\[0\]\.args\.n: stated twice"):
        parse_study(text, "study.yaml")


def test_nested_aliases_are_refused_within_a_second() -> None:
    bomb = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        previous = chr(ord("a") + level - 1)
        name = chr(ord("a") + level)
        bomb.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    text = STUDY + "\n".join(bomb) + "\n"
    start = time.perf_counter()
    with pytest.raises(StudyError, match="aliases expand to more than"):
        parse_study(text, "study.yaml")
    assert time.perf_counter() - start < 5.0  # generous: it takes milliseconds


def test_a_few_aliases_are_still_fine() -> None:
    text = STUDY.replace("args: {n: 4, seed: 0, agent: react}",
                         "args: &args {n: 4, seed: 0, agent: react}")
    text += "  - name: copy\n    binds_to: task_args\n    levels: [*args]\n"
    study = parse_study(text, "study.yaml")
    assert study.factors[1].levels[0].value == {"n": 4, "seed": 0, "agent": "react"}


def test_two_levels_binding_one_value_name_the_factor() -> None:
    text = STUDY + ("  - name: intervention\n    binds_to: intervention\n    levels:\n"
                    "      - {label: plain, value: none}\n      - {label: baseline, value: none}\n")
    with pytest.raises(StudyError, match=r"study.yaml:\d+: .*factor 'intervention': levels "
                                         r"'plain' and 'baseline' bind the same value"):
        parse_study(text, "study.yaml")


def test_an_unknown_intervention_fails_the_dry_run_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY + "  - name: intervention\n    binds_to: intervention\n"
                    "    levels: [none, paraphrse]\n")
    study = load_study(path)  # the file itself is well formed
    with pytest.raises(StudyError) as caught:
        plan(study, tmp_path / "logs")
    message = str(caught.value)
    assert message.startswith(f"{path}:15: factors[1].levels[1]: intervention level "
                              "'paraphrse': unknown intervention 'paraphrse'")
    with pytest.raises(StudyError):
        run_study(path, log_dir=tmp_path / "logs")
    assert not (tmp_path / "logs").exists()  # nothing ran, nothing was written


def test_an_unknown_solver_fails_the_dry_run(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY + "  - name: agent\n    binds_to: solver\n"
                    "    levels: [react, no_such_agent]\n")
    with pytest.raises(StudyError, match=r"study.yaml:15: factors\[1\]\.levels\[1\]: solver "
                                         r"level 'no_such_agent'"):
        plan(load_study(path), tmp_path / "logs")


def test_the_cli_reports_a_study_error_in_one_line_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(STUDY + "limit: 4\nlimit: 1000\n")
    done = subprocess.run([sys.executable, "-m", "harness.cli", "study", "run", str(path),
                           "--dry-run"], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr + done.stdout
    assert f"error: {path}:14: limit: stated twice" in done.stderr


# --------------------------------------------------------------------------- data files

RECORD = {
    "prompt": "p", "ground_truth": "g", "target_new": "t", "rephrase_prompt": "r",
    "subject_name": "s", "topic_name": "tp", "id": 1, "locality_prompt": "lp",
    "locality_ground_truth": "lg", "locality_subject_name": "ls",
    "locality_topic_name": "lt", "locality_id": 9,
}


def test_medversa_duplicate_ids_are_refused_with_both_records(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_text(json.dumps([RECORD, {**RECORD, "id": 2}, {**RECORD, "id": 1}]))
    with pytest.raises(DataFileError, match=r"split.json: id '1' is used by records 0 and 2"):
        load_records(path)


def test_medversa_jsonl_errors_name_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "split.jsonl"
    # a blank line before the bad one: the old loader counted only non-blank lines
    path.write_text(json.dumps(RECORD) + "\n\n" + '{"id": 2, "prompt": \n')
    with pytest.raises(DataFileError) as caught:
        read_raw(path)
    assert str(caught.value).startswith(f"{path}:3: not valid JSON")
    dup = tmp_path / "dup.jsonl"
    dup.write_text(json.dumps(RECORD) + "\n" + json.dumps({**RECORD, "id": 5}) + "\n"
                   + json.dumps(RECORD) + "\n")
    with pytest.raises(DataFileError, match=r"dup.jsonl:3: id '1' is used by lines 1 and 3"):
        read_raw(dup)


@pytest.mark.parametrize("case", ["missing", "folder", "empty", "truncated", "latin-1",
                                  "object"])
def test_medversa_file_faults_are_one_line_errors(tmp_path: Path, case: str) -> None:
    path = tmp_path / "split.json"
    expected = {"missing": "no such file", "folder": "is a folder", "empty": "is empty",
                "truncated": "ends early", "latin-1": "is not UTF-8",
                "object": "expected a JSON array"}[case]
    if case == "folder":
        path.mkdir()
    elif case == "empty":
        path.write_text("")
    elif case == "truncated":
        path.write_text(json.dumps([RECORD, RECORD])[:-40])
    elif case == "latin-1":
        path.write_bytes(json.dumps([{**RECORD, "prompt": "café"}], ensure_ascii=False)
                         .encode("latin-1"))
    elif case == "object":
        path.write_text(json.dumps(RECORD))
    with pytest.raises(DataFileError) as caught:
        load_records(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and expected in message and "\n" not in message


def test_medversa_cli_answers_a_bad_file_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_bytes(b"\xff\xfe[")
    done = subprocess.run([sys.executable, "-m", "environments.medversa.load", str(path)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: {path}:1: byte 0 is not UTF-8")
    assert "Traceback" not in done.stderr


def test_the_real_medversa_splits_pass_the_identity_check() -> None:
    root = Path(__file__).resolve().parents[3] / "shared" / "reference-data" / "medversa"
    if not (root / "test.json").is_file():
        pytest.skip(f"the MedVersa reference data is not beside this clone ({root})")
    assert len(load_records(root / "test.json")) == 1000


def test_formulacode_duplicate_task_ids_are_refused(tmp_path: Path) -> None:
    from environments.formulacode.pack import pack_records

    rows = pack_records()[:2]
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in [rows[0], rows[1], rows[0]]) + "\n")
    with pytest.raises(DataFileError, match="tasks.jsonl: id .* is used by records 0 and 2"):
        load_formulacode(path)
