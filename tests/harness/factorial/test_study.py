"""Study files: validation errors name the field and the YAML line; cells bind correctly."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.factorial.study import StudyError, load_study, parse_study

EXAMPLES = Path(__file__).resolve().parents[3] / "harness" / "factorial" / "examples"

VALID = textwrap.dedent("""\
    name: t
    response:
      tasks:
        - name: harness/arithmetic
          args: {n: 3}
      scores: [exact_integer]
    factors:
      - name: model
        binds_to: model
        levels: [scripted/arith-oracle, scripted/arith-left-to-right]
      - name: prompt
        binds_to: task_args
        key: prompt_style
        levels:
          - plain
          - {label: instr, value: instructive}
      - name: temp
        binds_to: generate_config
        key: temperature
        levels: [0.0, 0.7]
    """)


def _error(text: str) -> str:
    with pytest.raises(StudyError) as info:
        parse_study(text, source="study.yaml")
    return str(info.value)


def test_valid_study_expands_to_bound_cells() -> None:
    study = parse_study(VALID)
    cells = study.cells()
    assert len(cells) == 2 * 2 * 2
    assert len({c.id for c in cells}) == len(cells)
    cell = next(c for c in cells if c.levels == {
        "model": "scripted/arith-left-to-right", "prompt": "instr", "temp": "0.7"})
    assert cell.model == "scripted/arith-left-to-right"
    assert cell.task_args == {"n": 3, "prompt_style": "instructive"}
    assert cell.generate_config == {"temperature": 0.7}
    assert cell.metadata["factors"] == cell.levels
    assert "prompt=instr" in cell.tags


def test_cell_ids_are_stable_and_independent_of_order() -> None:
    first = {c.id: c.levels for c in parse_study(VALID).cells()}
    swapped = VALID.replace(
        "levels: [scripted/arith-oracle, scripted/arith-left-to-right]",
        "levels: [scripted/arith-left-to-right, scripted/arith-oracle]",
    )
    second = {c.id: c.levels for c in parse_study(swapped).cells()}
    assert first == second


def test_missing_field_names_path_and_line() -> None:
    text = VALID.replace("    levels: [0.0, 0.7]\n", "")
    message = _error(text)
    # the 'temp' factor starts on line 17; its levels are missing
    assert message == "study.yaml:17: factors[2].levels: Field required"


def test_wrong_type_points_at_the_value_line() -> None:
    message = _error(VALID.replace("binds_to: task_args", "binds_to: prompt"))
    assert message.startswith("study.yaml:12: factors[1].binds_to:")
    assert "model_args" in message  # lists what is allowed


def test_unknown_key_and_bad_design_are_reported_with_lines() -> None:
    text = VALID + "design: {type: fractional}\nbogus: 1\n"
    message = _error(text)
    assert "study.yaml:22: bogus: Extra inputs are not permitted" in message


def test_semantic_errors_have_lines() -> None:
    text = VALID + "design:\n  type: fractional\n"
    message = _error(text)
    assert "study.yaml:21: design: fractional design needs `generators` or `resolution`" \
        in message
    dup = VALID.replace("name: temp", "name: model")
    assert "study.yaml:17: factors[2].name: duplicate factor name 'model'" in _error(dup)
    causal = VALID + "causal:\n  edges: ['prompt -> parsing']\n"
    assert "study.yaml:22: causal.edges[0]: unknown node 'parsing'" in _error(causal)


def test_yaml_syntax_error_has_line() -> None:
    message = _error("name: t\nfactors: [\n  - a\n")
    assert message.startswith("study.yaml:")
    assert "not valid YAML" in message


def test_fractional_and_random_designs() -> None:
    two_level = VALID + "design: {type: fractional, generators: ['C=AB']}\n"
    assert len(parse_study(two_level).cells()) == 4
    subset = VALID + "design: {type: random, budget: 3, seed: 1}\n"
    cells = parse_study(subset).cells()
    full_ids = {c.id for c in parse_study(VALID).cells()}
    assert len(cells) == 3 and {c.id for c in cells} <= full_ids


def test_seed_replicates_multiply_cells() -> None:
    study = parse_study(VALID + "replicates: {epochs: 2, seeds: [1, 2]}\n")
    cells = study.cells()
    assert len(cells) == 16
    assert {c.generate_config.get("seed") for c in cells} == {1, 2}


def test_examples_load(tmp_path: Path) -> None:
    for path in EXAMPLES.glob("*.yaml"):
        study = load_study(path)
        assert study.cells()
    demo = load_study(EXAMPLES.parents[2] / "methods" / "studies" / "arithmetic_demo"
                      / "study.yaml")
    assert len(demo.cells()) == 12


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="cannot read"):
        load_study(tmp_path / "missing.yaml")


def test_headline_factor_must_name_a_factor() -> None:
    assert parse_study(VALID + "headline_factor: prompt\n").headline_factor == "prompt"
    message = _error(VALID + "headline_factor: temperature\n")
    assert ("study.yaml:21: headline_factor: headline_factor 'temperature' is not a factor "
            "(factors: model, prompt, temp)") in message
