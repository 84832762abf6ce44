"""The arithmetic task end to end with offline scripted agents (no network, no tiktoken)."""

from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval

from benchmarks.arithmetic.arithmetic import arithmetic, record_to_sample
from benchmarks.arithmetic.policies import left_to_right
from benchmarks.arithmetic.scorer import extract_integer
from environments.arithmetic import generate_problems


def test_record_to_sample_on_a_real_record() -> None:
    record = generate_problems(1, seed=0)[0].to_record()
    sample = record_to_sample(record, "plain")
    assert sample.id == record["id"]
    assert sample.target == str(record["answer"])
    assert str(record["expression"]) in str(sample.input)
    assert sample.metadata == {"expression": record["expression"], "n_terms": record["n_terms"]}


def test_extract_integer() -> None:
    assert extract_integer("The answer is 1,234.") == 1234
    assert extract_integer("-7") == -7
    assert extract_integer("first 3 then 4") == 4
    assert extract_integer("no digits") is None


def test_unknown_prompt_style_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="prompt_style"):
        arithmetic(prompt_style="shouty")  # type: ignore[arg-type]


def _accuracy(log_dir: Path, model: str, **task_args: object) -> float:
    log = inspect_eval(arithmetic(**task_args), model=model, log_dir=str(log_dir),
                       display="none")[0]
    assert log.status == "success", log.error
    assert log.results is not None
    return float(log.results.scores[0].metrics["accuracy"].value)


@pytest.mark.slow
def test_oracle_solves_every_problem_through_the_calculator(tmp_path: Path) -> None:
    assert _accuracy(tmp_path, "scripted/arith-oracle", n=15, seed=2) == 1.0


def test_left_to_right_agent_scores_exactly_where_precedence_does_not_matter(
    tmp_path: Path,
) -> None:
    problems = generate_problems(30, seed=5)
    expected = sum(left_to_right(p.expression) == p.answer for p in problems) / 30
    assert 0 < expected < 1  # the seed gives a mix, so the check can fail either way
    got = _accuracy(tmp_path, "scripted/arith-left-to-right", n=30, seed=5)
    assert got == pytest.approx(expected)


def test_generate_agent_without_tools(tmp_path: Path) -> None:
    assert _accuracy(tmp_path, "scripted/arith-oracle", n=5, agent="generate") == 1.0
