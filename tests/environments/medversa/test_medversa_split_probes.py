"""Train/eval split (disjoint, seeded, stratified) and the portability / retention probes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from environments.medversa import load_dataset
from environments.medversa.probes import build_mcq, one_hop
from environments.medversa.split import (
    check_disjoint,
    released_train_file,
    seeded_split,
    texts,
    without_shared_queries,
)

REPO = Path(__file__).resolve().parents[3]
REAL_TEST = (REPO / "../shared/reference-data/medversa/test.json").resolve()


def test_seeded_split_of_the_sample_is_disjoint_deterministic_and_stratified() -> None:
    cases = load_dataset("sample")
    a, b = seeded_split(cases, seed=0), seeded_split(cases, seed=0)
    assert [c.id for c in a.train] == [c.id for c in b.train]
    assert len(a.train) + len(a.eval) == len(cases)
    assert len(a.train) == round(0.2 * len(cases))
    check_disjoint(a.train, a.eval)
    other = seeded_split(cases, seed=1)
    assert [c.id for c in other.train] != [c.id for c in a.train]
    assert a.source == f"seeded:0:{len(a.train)}"


@pytest.mark.skipif(not REAL_TEST.is_file(), reason="reference MedVersa test.json not present")
def test_split_of_the_reference_test_file_never_overlaps_the_evaluated_records() -> None:
    cases = load_dataset(REAL_TEST)
    split = seeded_split(cases, n_train=200, seed=0)
    assert len(split.train) <= 200 and len(split.train) + len(split.eval) == 1000
    train_texts = set().union(*(texts(c) for c in split.train))
    for c in split.eval:
        assert not texts(c) & train_texts
    assert {c.id for c in split.train}.isdisjoint({c.id for c in split.eval})
    # every subject with >= 5 records gives some train records (stratified)
    counts: dict[str, int] = {}
    for c in cases:
        counts[c.subject] = counts.get(c.subject, 0) + 1
    got = {c.subject for c in split.train}
    assert {s for s, k in counts.items() if k >= 5} <= got
    assert len(counts) == 20


def test_overlap_is_an_error_and_a_leaking_train_record_moves_to_eval() -> None:
    cases = load_dataset("sample")[:10]
    leak = replace(cases[1], id="leak", prompt=cases[0].prompt)
    with pytest.raises(ValueError, match="shares a query"):
        check_disjoint([cases[0]], [leak])
    with pytest.raises(ValueError, match="record ids"):
        check_disjoint([cases[0]], [cases[0]])
    split = seeded_split([*cases, leak], n_train=5, seed=0)
    check_disjoint(split.train, split.eval)
    with pytest.raises(ValueError, match="n_train"):
        seeded_split(cases, n_train=10)


def test_train_records_sharing_a_query_with_the_evaluated_ones_are_dropped() -> None:
    cases = load_dataset("sample")[:10]
    leak = replace(cases[1], id="leak", prompt=cases[0].prompt)  # query of an eval record
    same_id = replace(cases[2], prompt="unrelated")
    kept = without_shared_queries([leak, same_id, cases[3]], [cases[0], cases[2]])
    assert [c.id for c in kept] == [cases[3].id]
    check_disjoint(kept, [cases[0], cases[2]])


REAL_TRAIN = REAL_TEST.parent / "train.json"


@pytest.mark.skipif(not REAL_TRAIN.is_file(), reason="reference MedVersa train.json not present")
def test_the_released_train_split_trains_on_the_test_file_without_leaking() -> None:
    """`train=auto` on the released test.json: the released train.json less the records
    that share a query with a test record (37 test records share one as released)."""
    from benchmarks.medversa.medversa import make_split

    split = make_split(str(REAL_TEST))
    assert len(split.eval) == 1000
    assert 2900 < len(split.train) < 3000
    assert "less" in split.source and "released:" in split.source
    check_disjoint(split.train, split.eval)


def test_released_train_file_is_found_only_beside_a_split_file(tmp_path: Path) -> None:
    (tmp_path / "test.json").write_text("[]")
    assert released_train_file(tmp_path / "test.json") is None
    (tmp_path / "train.json").write_text("[]")
    assert released_train_file(tmp_path / "test.json") == tmp_path / "train.json"
    assert released_train_file(tmp_path / "mine.json") is None


def test_one_hop_probe_asks_for_the_new_answers_first_letter() -> None:
    case = load_dataset("sample")[0]
    probe = one_hop(replace(case, target_new="Opiates", ground_truth="Alcohol"))
    assert probe is not None and probe.target == " O"
    assert probe.prompt.startswith("Question: " + case.prompt.strip())
    assert one_hop(replace(case, target_new="Opiates", ground_truth="opium")) is None


def test_mcq_items_have_one_right_answer_among_distinct_options() -> None:
    cases = load_dataset("sample")
    items = build_mcq(cases, 20, seed=0)
    assert len(items) == 20
    assert items == build_mcq(cases, 20, seed=0)
    answers = {c.locality[0].prompt: c.locality[0].ground_truth.strip() for c in cases}
    for it in items:
        assert len(it.options) == 4 and len({o.lower() for o in it.options}) == 4
        assert it.options[it.answer] == answers[it.question]
        assert it.prompt().endswith("\nD. " + it.options[3] + "\nAnswer:")
    assert len({it.answer for it in items}) > 1  # the right letter varies
