"""Factorial reports built from real Inspect logs of a small arithmetic factorial.

The logs come from running ``benchmarks/arithmetic`` with the two scripted reference agents
(``arith-oracle`` always right, ``arith-left-to-right`` right only where precedence does not
matter) under three prompt styles, each cell an Inspect eval whose metadata records the
cell's factor levels, as ``harness.factorial.run`` does. Expected numbers are computed here
independently of the report code (plain Python over the results frame).
"""

from __future__ import annotations

import base64
import importlib.metadata
import json
import platform
import re
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any, Literal

import jsonschema
import polars as pl
import pytest

from harness.factorial import plots
from harness.factorial.report import (
    SCHEMA_VERSION,
    build_report,
    report_data,
    study_factors,
    study_frame,
)
from harness.results import read_results

MODELS = ["arith-oracle", "arith-left-to-right"]
STYLES: list[Literal["plain", "terse", "instructive"]] = ["plain", "terse", "instructive"]
N_ITEMS = 8
EPOCHS = 2
STUDY = "report-test"
SCHEMA_DOC = Path(__file__).parents[3] / "harness" / "factorial" / "REPORT_SCHEMA.md"
PNG = b"\x89PNG\r\n\x1a\n"


def _run_cells(log_dir: Path) -> None:
    """Every cell as one Inspect task whose metadata records the cell (as ``run.py`` does),
    evaluated together in one ``eval`` call, plus one log that belongs to no study."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai import task_with
    from inspect_ai.model import get_model

    import benchmarks.arithmetic.policies  # noqa: F401  (registers the scripted policies)
    from benchmarks.arithmetic.arithmetic import arithmetic

    tasks = []
    for model in MODELS:
        for style in STYLES:
            task = arithmetic(n=N_ITEMS, seed=3, prompt_style=style)
            metadata = {"study": STUDY, "cell_id": f"{model}-{style}",
                        "factors": {"model": model, "prompt_style": style}}
            tasks.append(task_with(task, model=get_model(f"scripted/{model}"), epochs=EPOCHS,
                                   metadata={**(task.metadata or {}), **metadata}))
    tasks.append(task_with(arithmetic(n=3, seed=3), model=get_model("scripted/arith-oracle")))
    logs = inspect_eval(tasks, log_dir=str(log_dir), max_tasks=len(tasks), display="none")
    assert [log.status for log in logs] == ["success"] * len(tasks)


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("study-logs")
    _run_cells(path)
    return path


@pytest.fixture(scope="module")
def report(log_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return build_report(log_dir, tmp_path_factory.mktemp("report"), title="Arithmetic study")


@pytest.fixture(scope="module")
def data(report: dict[str, Path]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(report["json"].read_text())
    return loaded


def _documented_schema() -> dict[str, Any]:
    text = SCHEMA_DOC.read_text()
    blocks = re.findall(r"```json\n(.*?)\n```", text, flags=re.S)
    assert len(blocks) == 1, "REPORT_SCHEMA.md must hold exactly one JSON Schema block"
    schema: dict[str, Any] = json.loads(blocks[0])
    return schema


def _independent_cell_means(log_dir: Path) -> dict[tuple[str, str], list[float]]:
    """(model, prompt_style) -> score values, from the raw results frame in plain Python."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in read_results(log_dir).iter_rows(named=True):
        factors = json.loads(row["eval_metadata"]).get("factors")
        if factors and row["score_value"] is not None and row["scorer"] == "exact_integer":
            values[(factors["model"], factors["prompt_style"])].append(row["score_value"])
    return values


# --------------------------------------------------------------------------- the frame


@pytest.mark.slow
def test_study_frame_has_one_column_per_factor(log_dir: Path) -> None:
    frame = study_frame(log_dir)
    assert study_factors(frame) == ["model", "prompt_style"]
    in_study = frame.filter(pl.col("study") == STUDY)
    assert set(in_study.get_column("model").unique()) == set(MODELS)
    assert set(in_study.get_column("prompt_style").unique()) == set(STYLES)
    # the displaced Inspect model name is kept, and matches the factor level
    pairs = set(in_study.select("model", "log_model").unique().iter_rows())
    assert pairs == {(m, f"scripted/{m}") for m in MODELS}
    # the non-study log is in the frame, without factor levels
    outside = frame.filter(pl.col("study").is_null() & (pl.col("scorer") == "exact_integer"))
    assert outside.get_column("model").null_count() == 3
    assert study_frame(log_dir, study=STUDY).height == in_study.height


# --------------------------------------------------------------------------- the JSON


@pytest.mark.slow
def test_json_validates_against_documented_schema(data: dict[str, Any]) -> None:
    schema = _documented_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["schema_version"] == SCHEMA_VERSION
    # every top-level field is also described in the prose tables, in the file's order
    doc = SCHEMA_DOC.read_text()
    documented = re.findall(r"^\| `([a-z_]+)` \|", doc.split("## `response`")[0], flags=re.M)
    assert documented == list(data)
    assert list(data) == schema["required"]


@pytest.mark.slow
def test_schema_rejects_a_malformed_report(data: dict[str, Any]) -> None:
    validator = jsonschema.Draft202012Validator(_documented_schema())
    broken = json.loads(json.dumps(data))
    broken["cell_results"][0]["mean"] = "high"
    del broken["design"]["n_cells"]
    broken["surprise"] = 1
    messages = {e.message for e in validator.iter_errors(broken)}
    assert len(messages) == 3, messages


@pytest.mark.slow
def test_cell_means_equal_independent_means(data: dict[str, Any], log_dir: Path) -> None:
    expected = _independent_cell_means(log_dir)
    cells = {(c["levels"]["model"], c["levels"]["prompt_style"]): c for c in data["cell_results"]}
    assert set(cells) == set(expected) and len(cells) == len(MODELS) * len(STYLES)
    for key, values in expected.items():
        cell = cells[key]
        assert cell["mean"] == pytest.approx(sum(values) / len(values), abs=1e-12)
        assert cell["n"] == len(values) == N_ITEMS * EPOCHS
        assert cell["n_items"] == N_ITEMS
        assert cell["errors"] == 0
        assert cell["ci_lower"] <= cell["mean"] <= cell["ci_upper"]
    # the reference agents behave as documented: the oracle is always right
    for style in STYLES:
        oracle = cells[("arith-oracle", style)]
        # 0/1 scores: a zero-variance cell gets the Wilson interval for its items, whose
        # lower bound at n of n successes is n / (n + z^2) (Wilson 1927), never [1, 1]
        z2 = 1.959963984540054**2
        assert oracle["mean"] == 1.0 and oracle["ci_upper"] == 1.0
        assert oracle["ci_lower"] == pytest.approx(N_ITEMS / (N_ITEMS + z2))
        assert cells[("arith-left-to-right", style)]["mean"] < 1.0
    assert data["data"]["n_rows_without_factors"] == 3


@pytest.mark.slow
def test_design_table_counts(data: dict[str, Any]) -> None:
    design = data["design"]
    assert design["n_cells"] == design["n_possible_cells"] == 6
    assert [f["name"] for f in design["factors"]] == ["model", "prompt_style"]
    for cell in design["cells"]:
        assert cell["n_items"] == N_ITEMS and cell["n_epochs"] == EPOCHS
        assert cell["n_samples"] == cell["n_scored"] == N_ITEMS * EPOCHS
        assert cell["status"] == ["success"] and cell["n_logs"] == 1
        assert cell["cell_ids"] == [f"{cell['levels']['model']}-{cell['levels']['prompt_style']}"]


@pytest.mark.slow
def test_anova_and_attribution(data: dict[str, Any], log_dir: Path) -> None:
    terms = [row["term"] for row in data["analysis"]["anova"]]
    assert {"model", "prompt_style", "model:prompt_style"} <= set(terms)
    assert data["analysis_error"] is None
    expected = _independent_cell_means(log_dir)
    means = {m: sum(sum(expected[(m, s)]) / len(expected[(m, s)]) for s in STYLES) / 3
             for m in MODELS}
    headline = data["attribution"]["headline"]
    assert (headline["best"], headline["worst"]) == ("arith-oracle", "arith-left-to-right")
    gap = means["arith-oracle"] - means["arith-left-to-right"]
    assert headline["difference"] == pytest.approx(gap)
    assert headline["setup_conditions"] == 3 and headline["conditions_same_sign"] == 3
    statement = data["attribution"]["statement"]
    assert f"{gap:+.3f}" in statement and "arith-oracle" in statement
    # prompt style does not change what the scripted agents compute: no share for it
    assert data["attribution"]["main_effect_share"] == pytest.approx(1.0)


@pytest.mark.slow
def test_headline_factor_moves_the_attribution_off_model(log_dir: Path) -> None:
    data = report_data(log_dir, headline_factor="prompt_style")
    attribution = data["attribution"]
    assert attribution["factor"] == "prompt_style"
    assert attribution["setup_factors"] == ["model"]
    assert attribution["statement"].startswith("The gap in ")
    assert " between prompt_style " in attribution["statement"]
    # the scripted agents ignore the prompt style: its main effect explains nothing
    assert attribution["main_effect_share"] == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(ValueError, match="headline_factor 'seed' is not among the factors"):
        report_data(log_dir, headline_factor="seed")


@pytest.mark.slow
def test_eval_commands_reproduce_recorded_specs(data: dict[str, Any]) -> None:
    commands = data["provenance"]["eval_commands"]
    assert len(commands) == 6
    for entry in commands:
        assert not entry["recorded"] and entry["epochs"] == EPOCHS
        words = shlex.split(entry["command"])
        assert words[:5] == ["inspect", "eval", "arithmetic", "--model", entry["model"]]
        targs = [words[i + 1] for i, w in enumerate(words) if w == "-T"]
        assert dict(a.split("=", 1) for a in targs) == {
            k: str(v) for k, v in entry["task_args"].items() if v is not None}
        assert words[-2:] == ["--epochs", str(EPOCHS)]
    versions = data["provenance"]["versions"]
    assert versions["inspect_ai"] == importlib.metadata.version("inspect_ai")
    assert versions["python"] == platform.python_version()
    suite = importlib.metadata.packages_distributions()["harness"][0]
    assert versions["evalsuite"] == importlib.metadata.version(suite)
    assert data["provenance"]["report_command"].startswith("harness study report ")


# --------------------------------------------------------------------------- the views


@pytest.mark.slow
def test_markdown_has_anova_rows_and_commands(report: dict[str, Path]) -> None:
    text = report["markdown"].read_text()
    anova = text.split("### ANOVA", 1)[1].split("###", 1)[0]
    rows = {line.split("|")[1].strip() for line in anova.splitlines() if line.startswith("| ")}
    assert {"model", "prompt_style", "model:prompt_style"} <= rows
    assert "inspect eval arithmetic --model scripted/arith-oracle" in text
    assert text.startswith("# Arithmetic study")


@pytest.mark.slow
def test_html_is_self_contained_with_inline_plots(report: dict[str, Path]) -> None:
    html = report["html"].read_text()
    for external in ("http://", "https://", "<script", "<link", "@import", "url("):
        assert external not in html
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    # main effects + one interaction (2 factors) + variance shares + marginal means
    assert len(images) == 4
    assert all(base64.b64decode(img).startswith(PNG) for img in images)
    for section in ("ANOVA", "Design", "Cell results", "Variance shares", "Commands"):
        assert section in html
    assert "model:prompt_style" in html


@pytest.mark.slow
def test_report_is_stable_across_builds(log_dir: Path, data: dict[str, Any],
                                        tmp_path: Path) -> None:
    again = json.loads(build_report(log_dir, tmp_path, title="Arithmetic study")["json"]
                       .read_text())
    for report_ in (again, data):
        report_.pop("generated_at")
        report_["provenance"].pop("report_command")
    assert json.dumps(again) == json.dumps(data)  # same keys, same order, same values


# --------------------------------------------------------------------------- edge cases


@pytest.mark.slow
def test_errors_count_under_the_benchmarks_policy(log_dir: Path) -> None:
    """Arithmetic's eval.yaml says an errored sample scores 0: the report's cell mean is
    the leaderboard's (half the oracle's samples errored -> 0.5), and it says so."""
    frame = study_frame(log_dir, study=STUDY)
    failing = ((pl.col("model") == "arith-oracle") & (pl.col("prompt_style") == "terse")
               & (pl.col("epoch") == 1))
    broken = frame.with_columns(
        pl.when(failing).then(pl.lit("RuntimeError: boom")).otherwise(pl.col("error"))
        .alias("error"),
        pl.when(failing).then(None).otherwise(pl.col("score_value")).alias("score_value"),
    )
    out = report_data(broken)
    cell = next(c for c in out["cell_results"]
                if c["levels"] == {"model": "arith-oracle", "prompt_style": "terse"})
    assert cell["errors"] == N_ITEMS and cell["n"] == 2 * N_ITEMS and cell["mean"] == 0.5
    assert out["data"]["n_errors"] == N_ITEMS
    assert out["data"]["errored_policy"] == "zero"


@pytest.mark.slow
def test_several_score_keys_need_a_choice(log_dir: Path) -> None:
    frame = study_frame(log_dir, study=STUDY).filter(pl.col("scorer") == "exact_integer")
    doubled = pl.concat([frame, frame.with_columns(
        pl.lit("other").alias("score_key"), (1 - pl.col("score_value")).alias("score_value"))])
    with pytest.raises(ValueError, match="several score keys"):
        report_data(doubled)
    flipped = report_data(doubled, score_key="other")
    assert {c["mean"] for c in flipped["cell_results"]
            if c["levels"]["model"] == "arith-oracle"} == {0.0}


@pytest.mark.slow
def test_failed_analysis_still_writes_the_report(log_dir: Path, tmp_path: Path) -> None:
    # total_time is not 0/1, so a binomial fit is refused; tables and plots still ship
    paths = build_report(log_dir, tmp_path, response="total_time", family="binomial",
                         study=STUDY)
    out = json.loads(paths["json"].read_text())
    assert out["analysis"] is None and "0/1" in out["analysis_error"]
    assert len(out["cell_results"]) == 6
    assert "Analysis not available" in paths["markdown"].read_text()
    jsonschema.Draft202012Validator(_documented_schema()).validate(out)


def test_protected_factor_names_are_refused() -> None:
    frame = pl.DataFrame({
        "eval_metadata": ['{"factors": {"sample_id": "a"}, "study": "s"}'],
        "score_value": [1.0],
    })
    with pytest.raises(ValueError, match="collide"):
        study_frame(frame)


# --------------------------------------------------------------------------- plots


def test_plots_render_png_data_uris() -> None:
    uris = [
        plots.level_means_plot({"a": [plots.LevelPoint("x", 0.2, 0.1, 0.3),
                                      plots.LevelPoint("y", 0.5)]},
                               ylabel="score", title="t"),
        plots.interaction_plot("a", "b", ["x", "y"], {"u": [0.1, None], "v": [0.3, 0.4]},
                               ylabel="score"),
        plots.variance_shares_plot([("a", 0.7), ("Residual", 0.3)], title="shares"),
    ]
    for uri in uris:
        prefix = "data:image/png;base64,"
        assert uri.startswith(prefix)
        assert base64.b64decode(uri[len(prefix):]).startswith(PNG)


@pytest.mark.slow
def test_cli_study_report_writes_three_files(log_dir: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, ["study", "report", str(log_dir), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html", "report.json",
                                                           "report.md"]
    assert json.loads((tmp_path / "report.json").read_text())["design"]["n_cells"] == 6


def test_score_key_defaults_to_the_studys_first_listed_score() -> None:
    from harness.factorial.report.assemble import resolve_score_key

    frame = pl.DataFrame({"score_key": ["scorer/objective", "scorer/gap_closed"] * 2})
    assert resolve_score_key(frame, None, ["gap_closed"]) == "scorer/gap_closed"
    assert resolve_score_key(frame, None, ["scorer/objective"]) == "scorer/objective"
    assert resolve_score_key(frame, "scorer/objective", ["gap_closed"]) == "scorer/objective"
    with pytest.raises(ValueError, match="several score keys"):
        resolve_score_key(frame, None, ["not_there"])


def test_a_lower_is_better_score_ranks_its_lowest_level_best() -> None:
    from harness.factorial.report.attribution import attribution_section
    from harness.factorial.report.options import Spec

    cells = [{"levels": {"sharing": level}, "mean": mean}
             for level, mean in (("qkv", 3.2), ("q-kv", 3.5), ("qk-v", 3.9))]
    for lower, best, worst in ((True, "qkv", "qk-v"), (False, "qk-v", "qkv")):
        spec = Spec(response="score_value", score_key="bpb/bpb", factors=["sharing"],
                    item="sample_id", order=1, lower_is_better=lower)
        headline = attribution_section(None, cells, spec)["headline"]
        assert (headline["best"], headline["worst"]) == (best, worst)
    statement = attribution_section(None, cells, spec)["statement"]
    assert "(lower is better)" not in statement
