"""Verdicts on a study's claim, computed: the classifier on synthetic studies of each kind,
and a real study whose file states a claim."""

from __future__ import annotations

import json
import math
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from harness.factorial.report import build_report
from harness.factorial.report.options import Spec
from harness.factorial.report.verdict import verdict_section
from harness.factorial.run import run_study
from harness.factorial.study import Claim, StudyError, parse_study
from harness.stats import Estimate, claim_verdict

TINY = Path(__file__).resolve().parents[3] / "harness/factorial/examples/tiny_study.yaml"
SPEC = Spec(response="score_value", score_key=None, factors=["method"], item="sample_id",
            order=1)


def _study(treatment: list[float], baseline: list[float], seed: int = 0) -> pl.DataFrame:
    """A two-arm study: per item one treatment and one baseline value."""
    n = len(treatment)
    return pl.DataFrame({
        "sample_id": [f"i{k}" for k in range(n)] * 2,
        "method": ["new"] * n + ["old"] * n,
        "score_value": [*treatment, *baseline],
    })


def _claim(**kw: object) -> Claim:
    return Claim(statement="new beats old", factor="method", treatment="new",
                 baseline="old", **kw)  # type: ignore[arg-type]


def _rng_scores(p: float, n: int, seed: int) -> list[float]:
    return np.random.default_rng(seed).binomial(1, p, n).astype(float).tolist()


def test_a_clear_effect_of_the_claimed_size_reproduces() -> None:
    frame = _study(_rng_scores(0.8, 200, 1), _rng_scores(0.4, 200, 2))
    verdict = verdict_section(frame, SPEC, _claim(size=0.4))
    assert verdict is not None and verdict["class"] == "reproduces", verdict["why"]
    assert verdict["floor_or_ceiling"] is False
    assert verdict["mdd"] < 0.4


def test_a_real_but_smaller_effect_is_partly() -> None:
    frame = _study(_rng_scores(0.55, 400, 3), _rng_scores(0.40, 400, 4))
    verdict = verdict_section(frame, SPEC, _claim(size=0.5))
    assert verdict is not None and verdict["class"] == "partly", verdict["why"]


def test_a_null_the_design_could_detect_contradicts_the_claimed_size() -> None:
    shared = _rng_scores(0.5, 300, 5)
    flips = _rng_scores(0.1, 300, 6)
    treatment = [1.0 - v if f else v for v, f in zip(shared, flips, strict=True)]
    verdict = verdict_section(_study(treatment, shared), SPEC, _claim(size=0.3))
    assert verdict is not None and verdict["class"] == "contradicted", verdict["why"]
    assert verdict["mdd"] < 0.3


def test_an_effect_on_the_other_side_contradicts() -> None:
    frame = _study(_rng_scores(0.2, 200, 7), _rng_scores(0.7, 200, 8))
    verdict = verdict_section(frame, SPEC, _claim())
    assert verdict is not None and verdict["class"] == "contradicted"


def test_both_arms_at_the_floor_are_untestable_not_a_failure() -> None:
    verdict = verdict_section(_study([0.0] * 30, [0.0] * 30), SPEC, _claim(size=0.5))
    assert verdict is not None and verdict["class"] == "untestable", verdict["why"]
    assert verdict["floor_or_ceiling"] is True
    assert verdict["arms"]["treatment"]["at"] == verdict["arms"]["baseline"]["at"] == "floor"
    assert "both arms are at the floor" in verdict["why"]


def test_a_baseline_at_the_ceiling_cannot_be_beaten() -> None:
    verdict = verdict_section(_study([1.0] * 29 + [0.0], [1.0] * 30), SPEC, _claim())
    assert verdict is not None and verdict["class"] == "untestable"
    assert "the baseline is at the ceiling" in verdict["why"]


def test_a_shortfall_against_a_baseline_at_the_ceiling_is_untestable_not_contradicted(
) -> None:
    """The treatment far below a baseline that is always right: the probe could not have
    shown the claimed gain, so the row is not a failed reproduction (issue 49)."""
    verdict = verdict_section(_study(_rng_scores(0.2, 60, 12), [1.0] * 60), SPEC, _claim())
    assert verdict is not None and verdict["class"] == "untestable", verdict["why"]
    assert verdict["contrast"]["ci"][1] < 0  # the CI is on the other side ...
    assert "other side of the claim, but the baseline is at the ceiling" in verdict["why"]
    # ... and the same shortfall against a baseline with room to move contradicts
    room = verdict_section(_study(_rng_scores(0.2, 60, 12), _rng_scores(0.8, 60, 13)), SPEC,
                           _claim())
    assert room is not None and room["class"] == "contradicted", room["why"]


def test_too_few_items_for_the_claimed_size_are_untestable() -> None:
    frame = _study(_rng_scores(0.5, 8, 9), _rng_scores(0.5, 8, 10))
    verdict = verdict_section(frame, SPEC, _claim(size=0.1))
    assert verdict is not None and verdict["class"] == "untestable"
    assert verdict["mdd"] > 0.1 and "minimum detectable difference" in verdict["why"]


def test_a_lower_is_better_claim_reads_the_contrast_the_other_way() -> None:
    rng = np.random.default_rng(11)
    old = rng.normal(5.0, 1.0, 60)
    new = old - 1.0 + rng.normal(0, 0.3, 60)  # new lowers a loss by ~1
    frame = _study(new.tolist(), old.tolist())
    verdict = verdict_section(frame, SPEC, _claim(better="lower", size=1.0))
    assert verdict is not None and verdict["class"] == "reproduces", verdict["why"]
    assert verdict["bounds"] is None  # not a [0, 1] score: no floor or ceiling assumed


def test_the_pure_classifier_needs_a_size_to_call_a_null() -> None:
    null = Estimate(0.01, 0.05, -0.09, 0.11, 100, None, 0.95)
    assert claim_verdict(null, 1, None, 0.14, None)[0] == "untestable"
    assert claim_verdict(null, 1, 0.3, 0.14, None)[0] == "contradicted"
    assert claim_verdict(null, 1, 0.3, 0.14, "both arms are at the floor")[0] == "untestable"
    assert claim_verdict(null, 1, 0.1, 0.14, None)[0] == "untestable"


def test_a_claim_must_name_a_factor_and_its_levels() -> None:
    text = TINY.read_text() + textwrap.dedent("""\
        claim:
          statement: the oracle beats left-to-right
          factor: model
          treatment: oracle
          baseline: right_to_left
        """)
    with pytest.raises(StudyError, match=r"claim\.baseline: 'right_to_left' is not a level"):
        parse_study(text, "study.yaml")


@pytest.mark.slow
def test_a_study_with_a_claim_reports_its_verdict(tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(TINY.read_text().replace("n: 4,", "n: 12,").replace("limit: 4", "limit: 12")
                     + textwrap.dedent("""\
        claim:
          statement: the oracle beats left-to-right evaluation by 0.3 in accuracy
          paper: a test
          factor: model
          treatment: oracle
          baseline: left_to_right
          size: 0.3
        """))
    logs = tmp_path / "logs"
    assert run_study(study, log_dir=logs).success
    paths = build_report(logs, tmp_path / "report")
    verdict = json.loads(paths["json"].read_text())["verdict"]
    assert verdict["class"] in ("reproduces", "partly", "contradicted", "untestable")
    assert verdict["arms"]["treatment"]["at"] == "ceiling"  # the oracle is always right
    assert verdict["contrast"]["n_items"] == 12
    markdown = paths["markdown"].read_text()
    assert "## Verdict on the claim" in markdown and f"**{verdict['class']}**" in markdown


def test_analyze_csv_on_a_01_response_keeps_intervals_inside_0_1(tmp_path: Path) -> None:
    """The linear model on a 0/1 column gave an always-right level [0.86, 1.14]; the CLI's
    default family now detects the binary response and fits the logit GLM (Firth)."""
    from typer.testing import CliRunner

    from harness.cli import app

    rng = np.random.default_rng(0)
    rows = ["item,A,y"] + [line for i in range(25) for line in (
        f"i{i},always,1", f"i{i},sometimes,{int(rng.random() < 0.5)}")]
    path = tmp_path / "binary.csv"
    path.write_text("\n".join(rows) + "\n")
    result = CliRunner().invoke(app, ["study", "analyze", "--csv", str(path), "--response",
                                      "y", "--factors", "A", "--item", "item", "--json"])
    assert result.exit_code == 0, result.output
    means = {m["level"]: m for m in json.loads(result.output)["marginal_means"]}
    assert 0.0 <= means["always"]["lo"] < means["always"]["hi"] <= 1.0
    assert 0.0 <= means["sometimes"]["lo"] < means["sometimes"]["hi"] <= 1.0


def test_a_baseline_too_close_to_the_ceiling_for_the_claimed_size_is_untestable() -> None:
    """UDM-GRPO's case: naive 0.967 of a [0, 1] reward leaves 0.033 of room; a claimed
    +0.27 cannot show, whatever the method does."""
    verdict = verdict_section(_study([1.0, 1.0, 1.0], [1.0, 0.9, 1.0]), SPEC, _claim(size=0.27))
    assert verdict is not None and verdict["class"] == "untestable", verdict["why"]
    assert "less than the claimed 0.27" in verdict["why"]


def test_one_paired_item_has_no_interval_and_says_so() -> None:
    one = Estimate(0.0, math.nan, math.nan, math.nan, 1, None, 0.95)
    cls, why = claim_verdict(one, 1, None, None, "both arms are at the floor")
    assert cls == "untestable"
    assert "no interval" in why and "nan" not in why and "includes 0" not in why


def _loss_study(loss: float, noise: float, n: int = 60, seed: int = 5) -> pl.DataFrame:
    """A lower-is-better score (bits per byte): the treatment adds ``loss`` on average."""
    rng = np.random.default_rng(seed)
    old = rng.normal(3.0, 0.5, n)
    return _study((old + loss + rng.normal(0, noise, n)).tolist(), old.tolist())


def test_a_no_worse_claim_reproduces_contradicts_or_cannot_tell() -> None:
    claim = _claim(kind="no_worse", tolerance=0.05, better="lower")
    small = verdict_section(_loss_study(0.01, 0.02), SPEC, claim)
    assert small is not None and small["class"] == "reproduces", small["why"]
    large = verdict_section(_loss_study(0.2, 0.02), SPEC, claim)
    assert large is not None and large["class"] == "contradicted", large["why"]
    noisy = verdict_section(_loss_study(0.05, 0.5), SPEC, claim)
    assert noisy is not None and noisy["class"] == "untestable", noisy["why"]
    assert "straddles the accepted loss 0.05" in noisy["why"]


def test_a_no_worse_claim_needs_a_tolerance_and_no_size() -> None:
    with pytest.raises(ValueError, match="needs the tolerance"):
        _claim(kind="no_worse")
    with pytest.raises(ValueError, match="states tolerance"):
        _claim(kind="no_worse", tolerance=0.1, size=0.2)
    with pytest.raises(ValueError, match="tolerance is for a no_worse claim"):
        _claim(tolerance=0.1)


def test_a_replicated_claim_carries_run_to_run_noise() -> None:
    """Two training seeds that disagree: over items the contrast looks certain, over the
    seeds (the claim's replicate factor) it is not."""
    rng = np.random.default_rng(3)
    rows = []
    for seed, shift in ((0, 0.30), (1, -0.10)):  # seed 1's run went the other way
        old = rng.normal(3.0, 0.5, 200)
        new = old - shift + rng.normal(0, 0.01, 200)
        for k in range(200):
            rows += [{"sample_id": f"i{k}", "seed": seed, "method": "new", "score_value": new[k]},
                     {"sample_id": f"i{k}", "seed": seed, "method": "old", "score_value": old[k]}]
    frame = pl.DataFrame(rows)
    over_items = verdict_section(frame, SPEC, _claim(better="lower"))
    over_seeds = verdict_section(frame, SPEC, _claim(better="lower", replicate="seed"))
    assert over_items is not None and over_items["class"] == "reproduces"
    assert over_seeds is not None and over_seeds["class"] == "untestable", over_seeds["why"]
    assert over_seeds["contrast"]["over"] == "seed" and over_seeds["contrast"]["n_items"] == 2


def _with_control(study: pl.DataFrame, control_loss: float, seed: int = 9) -> pl.DataFrame:
    """``study`` plus a ``cheap`` arm: the baseline plus ``control_loss`` and small noise."""
    old = study.filter(pl.col("method") == "old")
    noise = np.random.default_rng(seed).normal(0, 0.02, old.height)
    cheap = old.with_columns(pl.lit("cheap").alias("method"),
                             (pl.col("score_value") + control_loss + noise).alias("score_value"))
    return pl.concat([study, cheap])


def test_a_no_worse_claim_needs_a_control_that_shows_a_loss() -> None:
    """Matching the baseline is evidence only where the cheap run without the method does
    not: with a control that is as good as the baseline the probe cannot show a loss."""
    claim = _claim(kind="no_worse", tolerance=0.05, better="lower", control="cheap")
    sensitive = verdict_section(_with_control(_loss_study(0.01, 0.02), 0.5), SPEC, claim)
    assert sensitive is not None and sensitive["class"] == "reproduces", sensitive["why"]
    assert sensitive["control"]["sensitive"] is True
    blind = verdict_section(_with_control(_loss_study(0.01, 0.02), 0.0), SPEC, claim)
    assert blind is not None and blind["class"] == "untestable", blind["why"]
    assert blind["control"]["sensitive"] is False
    assert "the control (cheap - old" in blind["why"] and "not detectably worse" in blind["why"]
    # a control worse by less than the tolerance does not show the probe can see one
    slight = verdict_section(_with_control(_loss_study(0.01, 0.02), 0.03), SPEC, claim)
    assert slight is not None and slight["class"] == "untestable", slight["why"]


def test_a_control_is_a_third_level_of_a_no_worse_claim() -> None:
    with pytest.raises(ValueError, match="control is for a no_worse claim"):
        _claim(control="cheap")


def test_a_study_claim_control_must_be_a_third_level() -> None:
    def claim(control: str) -> str:
        return TINY.read_text() + textwrap.dedent(f"""\
            claim:
              statement: the oracle loses nothing
              factor: model
              treatment: oracle
              baseline: left_to_right
              kind: no_worse
              tolerance: 0.1
              control: {control}
            """)
    with pytest.raises(StudyError, match=r"claim\.control: 'nowhere' is not a level"):
        parse_study(claim("nowhere"), "study.yaml")
    with pytest.raises(StudyError, match=r"claim\.control: the control must be a third level"):
        parse_study(claim("oracle"), "study.yaml")
