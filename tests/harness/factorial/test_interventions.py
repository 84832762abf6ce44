"""Interventions keep gold answers valid, are deterministic per seed, and keep item ids."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice
from inspect_ai.tool import ToolInfo

import harness.models.providers  # noqa: F401  (registers scripted/)
from benchmarks.arithmetic.arithmetic import arithmetic
from harness.factorial.interventions import (
    NAMES,
    apply,
    apply_intervention,
    extract_answer,
    list_interventions,
)
from harness.models.scripted import last_user_text, scripted_policy

# interventions that can change an arithmetic item (entity_rename and option_permutation
# leave it as it is, which is also checked)
ARITHMETIC_INTERVENTIONS = [n for n in list_interventions()]

MC_ITEMS = [
    ("What colour is a clear daytime sky?", ["green", "blue", "red", "black"], "B"),
    ("Which animal barks?", ["dog", "cat", "cow", "owl"], "A"),
    ("Which is a prime number?", ["four", "six", "seven", "nine"], "C"),
    ("Which of these is a fruit?", ["carrot", "potato", "onion", "apple"], "D"),
    ("What do bees make?", ["milk", "honey", "silk", "wax paper"], "B"),
    ("Which planet do we live on?", ["Mars", "Venus", "Earth", "Jupiter"], "C"),
]
CORRECT_TEXT = {q: opts[ord(t) - 65] for q, opts, t in MC_ITEMS}


def _mc_dataset() -> MemoryDataset:
    return MemoryDataset([
        Sample(id=f"q{i}", input=q, choices=opts, target=t)
        for i, (q, opts, t) in enumerate(MC_ITEMS)
    ])


@scripted_policy("test-mc-knower")
def _mc_knower(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
               args: dict[str, Any]) -> str:
    """Knows each question's right answer *text* and finds its letter in the prompt."""
    prompt = last_user_text(input)
    for question, answer in CORRECT_TEXT.items():
        if question in prompt:
            match = re.search(rf"^([A-Z])\) {re.escape(answer)}$", prompt, re.MULTILINE)
            assert match, prompt
            return f"ANSWER: {match.group(1)}"
    return "ANSWER: A"


def _accuracy(log: Any) -> float:
    assert log.status == "success", log.error
    return float(log.results.scores[0].metrics["accuracy"].value)


@pytest.mark.slow
def test_oracle_still_perfect_on_arithmetic_after_each_intervention(tmp_path: Path) -> None:
    tasks = [apply_intervention(arithmetic(n=6, seed=3), name, seed=1)
             for name in ARITHMETIC_INTERVENTIONS]
    logs = eval(tasks, model="scripted/arith-oracle", display="none", log_dir=str(tmp_path),
                log_samples=False, ctl_server=False)
    by_name = {(log.eval.metadata or {})["intervention"]["name"]: _accuracy(log)
               for log in logs}
    assert by_name == dict.fromkeys(ARITHMETIC_INTERVENTIONS, 1.0)


def test_interventions_change_arithmetic_inputs_but_not_targets() -> None:
    base = list(arithmetic(n=6, seed=3).dataset)
    for name in ("paraphrase", "distractor", "format_json", "format_prose"):
        changed = [apply(s, name, 0) for s in base]
        assert all(a.input != b.input for a, b in zip(base, changed, strict=True)), name
        assert [s.target for s in changed] == [s.target for s in base]
        assert [s.id for s in changed] == [s.id for s in base]


def test_option_permutation_keeps_the_right_answer_right() -> None:
    base = list(_mc_dataset())
    moved = 0
    for seed in range(3):
        for sample in base:
            out = apply(sample, "option_permutation", seed)
            assert out.id == sample.id
            assert sorted(out.choices or []) == sorted(sample.choices or [])
            old = (sample.choices or [])[ord(str(sample.target)) - 65]
            new = (out.choices or [])[ord(str(out.target)) - 65]
            assert new == old
            moved += out.target != sample.target
    assert moved > 0  # the permutation really moves answers


@pytest.mark.slow
def test_option_permutation_scores_same_with_a_model_that_knows_the_answers(
        tmp_path: Path) -> None:
    tasks = [
        Task(dataset=_mc_dataset(), solver=multiple_choice(), scorer=choice(), name="mc"),
        apply_intervention(
            Task(dataset=_mc_dataset(), solver=multiple_choice(), scorer=choice(), name="mc"),
            "option_permutation", seed=2,
        ),
    ]
    logs = eval(tasks, model="scripted/test-mc-knower", display="none", log_samples=False,
                log_dir=str(tmp_path), ctl_server=False)
    assert [_accuracy(log) for log in logs] == [1.0, 1.0]


@pytest.mark.parametrize("name", list_interventions())
def test_deterministic_per_seed_and_ids_stable(name: str) -> None:
    samples = list(_mc_dataset()) + list(arithmetic(n=5, seed=1).dataset) + [
        Sample(id="p", input="Alex gave Sam 1500 coins and 3 stamps.", target="Alex")]
    first = [apply(s, name, 7) for s in samples]
    second = [apply(s, name, 7) for s in samples]
    assert [s.model_dump() for s in first] == [s.model_dump() for s in second]
    assert [s.id for s in first] == [s.id for s in samples]
    assert all(s.metadata and s.metadata["interventions"][-1] == {"name": name, "seed": 7}
               for s in first)


def test_order_independent() -> None:
    samples = list(arithmetic(n=8, seed=2).dataset)
    forward = {s.id: s.input for s in apply_intervention(samples, "paraphrase", 3)}
    backward = {s.id: s.input for s in apply_intervention(samples[::-1], "paraphrase", 3)}
    assert forward == backward


def test_seeds_differ_somewhere() -> None:
    samples = list(arithmetic(n=12, seed=2).dataset)
    a = [s.input for s in apply_intervention(samples, "distractor", 0)]
    b = [s.input for s in apply_intervention(samples, "distractor", 1)]
    assert a != b


def test_number_format_preserves_values() -> None:
    sample = Sample(id="n", input="A farm had 1234 sheep, 3 dogs and 12 + 7 hens; 0042.",
                    target="1234")
    out = apply(sample, "number_format", 0)
    assert out.input == "A farm had 1,234 sheep, three dogs and 12 + 7 hens; 0042."
    assert out.target == "1234"
    arith = list(arithmetic(n=10, seed=0).dataset)
    # operands inside an expression stay digits (the expression must stay computable)
    assert [apply(s, "number_format", 0).input for s in arith] == [s.input for s in arith]


def test_entity_rename_is_consistent_in_input_target_and_choices() -> None:
    sample = Sample(id="e", input="Alex met Sam. Who did Alex meet?", target="Sam",
                    choices=["Alex", "Sam", "Kim"])
    out = apply(sample, "entity_rename", 4)
    mapping = out.metadata["renamed"]  # type: ignore[index]
    assert set(mapping) == {"Alex", "Sam", "Kim"}
    assert out.input == f"{mapping['Alex']} met {mapping['Sam']}. Who did {mapping['Alex']} meet?"
    assert out.target == mapping["Sam"]
    assert out.choices == [mapping["Alex"], mapping["Sam"], mapping["Kim"]]
    assert len(set(mapping.values())) == 3 and set(mapping.values()) <= set(NAMES)
    assert not set(mapping.values()) & {"Alex", "Sam", "Kim"}


def test_json_format_is_recorded_for_scorers() -> None:
    out = apply(Sample(id="j", input="2 + 2", target="4"), "format_json", 0)
    assert out.metadata["answer_format"] == "json"  # type: ignore[index]
    assert extract_answer('Sure. {"answer": 4}', out.metadata) == "4"
    assert extract_answer("4", out.metadata) == "4"  # falls back to the text
    assert extract_answer('{"answer": 4}', {}) == '{"answer": 4}'


def test_task_records_intervention_in_metadata_and_args() -> None:
    task = apply_intervention(arithmetic(n=3), "distractor", seed=5)
    assert task.metadata is not None
    assert task.metadata["intervention"] == {"name": "distractor", "seed": 5}
    assert task.metadata["benchmark"] == "arithmetic"
    from harness.inspect_compat import recorded_task_args

    params = recorded_task_args(task)
    assert params["intervention"] == "distractor" and params["intervention_seed"] == 5


def test_unknown_intervention() -> None:
    with pytest.raises(ValueError, match="unknown intervention 'nope'"):
        apply(Sample(id="x", input="x", target="y"), "nope", 0)
