"""Lifelong sequential editing: the curve, its CIs and retention, on a tiny random Llama."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks.medversa.lifelong import _resumed_runs, _table, _write_lifelong
from benchmarks.medversa.protocol import (
    CurvePoint,
    checkpoints,
    make_units,
    point_summary,
    retention,
    run_lifelong,
    run_whitebox_unit,
)
from benchmarks.medversa.whitebox import WhiteBoxRunner
from environments.medversa import load_dataset
from harness.plugins.editor import Edit, Editor, make_editor


class _Tok:
    eos_token_id = 1
    pad_token_id = None

    def __call__(self, text: str, add_special_tokens: bool = True) -> Any:
        return SimpleNamespace(input_ids=[2 + (b % 62) for b in text.encode()])

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return "".join(chr(97 + (int(i) % 26)) for i in ids)


@pytest.fixture(scope="module")
def tiny() -> WhiteBoxRunner:
    torch = pytest.importorskip("torch")
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048))
    model.eval()
    return WhiteBoxRunner(model, _Tok())


class _Recorder(Editor):
    """Records the size of every apply call and which cases were scored when."""

    name = "recorder"

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []
        self.resets = 0

    def _added(self, edits: list[Edit]) -> None:
        self.calls.append(len(edits))

    def _cleared(self) -> None:
        self.resets += 1

    def retrieve(self, queries: Any) -> list[int | None]:
        return [None for _ in queries]


def test_checkpoints() -> None:
    assert checkpoints(10, 3) == [3, 6, 9, 10]
    assert checkpoints(100, 10)[-1] == 100 and len(checkpoints(100, 10)) == 10
    with pytest.raises(ValueError):
        checkpoints(0, 1)


def test_curve_applies_one_edit_per_call_and_scores_the_edits_so_far(
        tiny: WhiteBoxRunner) -> None:
    cases = make_units(load_dataset("sample"), "sequential", 7, seed=0)[0]
    rec = _Recorder()
    points = run_lifelong(tiny, rec, cases, every=3)
    assert rec.calls == [1] * 7 and rec.resets == 2  # reset before and after, never between
    assert [p.n_edits for p in points] == [3, 6, 7]
    assert [len(p.scores) for p in points] == [3, 6, 7]
    assert points[-1].case_ids == [c.id for c in cases]
    assert all(s["locality"] == 1.0 for p in points for s in p.scores)  # nothing changed
    assert points[1].edit_seconds >= points[0].edit_seconds


def test_unedited_curve_has_full_locality_with_a_degenerate_ci(tiny: WhiteBoxRunner) -> None:
    cases = make_units(load_dataset("sample"), "sequential", 6, seed=1)[0]
    points = run_lifelong(tiny, make_editor("none"), cases, every=3)
    summary = point_summary(points[-1], n_boot=200)
    assert summary["locality"] == {"mean": 100.0, "lo": 100.0, "hi": 100.0}
    eff = summary["efficacy"]
    assert eff["lo"] <= eff["mean"] <= eff["hi"]
    assert summary["false_retrieval"]["mean"] == 0.0
    ret = retention(points, n_boot=200)
    assert ret["cases"] == 3 and ret["locality"]["mean"] == 0.0
    assert ret["efficacy"]["mean"] == 0.0  # the unedited model does not forget anything


def test_ike_curve_matches_the_batch_unit_at_the_end(tiny: WhiteBoxRunner) -> None:
    """With a knowledge-base editor the last curve point is exactly the sequential unit."""
    cases = make_units(load_dataset("sample"), "sequential", 5, seed=2)[0]
    points = run_lifelong(tiny, make_editor("ike"), cases, every=5)
    unit = run_whitebox_unit(tiny, make_editor("ike"), cases, "sequential")
    for got, want in zip(points[-1].scores, unit.scores, strict=True):
        assert {k: got[k] for k in want} == want


def test_retention_is_the_paired_change_of_the_first_cases() -> None:
    def point(n: int, eff: list[float]) -> CurvePoint:
        rows = [{"efficacy": e, "generality": 0.5, "locality": 1.0} for e in eff]
        return CurvePoint(n, [str(i) for i in range(n)], rows, 0.0, 0.0)

    first, last = point(2, [1.0, 1.0]), point(4, [0.0, 1.0, 1.0, 1.0])
    ret = retention([first, last], n_boot=500)
    assert ret["efficacy"]["mean"] == -50.0
    assert ret["efficacy"]["lo"] == -100.0 and ret["efficacy"]["hi"] == 0.0
    assert ret["generality"]["mean"] == 0.0
    assert retention([first]) == {}


def test_table_renders_every_point_and_retention() -> None:
    cell = {"mean": 50.0, "lo": 40.0, "hi": 60.0}
    run = {"curve": [{"n_edits": n, "edit_seconds": 1.0, **{m: cell for m in (
        "efficacy", "generality", "locality", "avg", "false_retrieval")}} for n in (5, 10)],
        "retention": {"cases": 5, **{m: cell for m in ("efficacy", "generality", "locality")}}}
    text = _table({"rome": run})
    assert text.count("| rome |") == 3 and "50.0 [40.0, 60.0]" in text
    json.dumps(run)  # the summary is JSON-able as written


def test_committed_lifelong_results_are_consistent() -> None:
    folder = Path(__file__).resolve().parents[3] / "methods/studies/medversa_protocol/logs/lifelong"
    files = sorted(folder.glob("lifelong-*.json"))
    assert files, f"no lifelong results in {folder}"
    for path in files:
        data = json.loads(path.read_text())
        n = data["settings"]["n"]
        for run in data["runs"].values():
            # a run cut short holds the first checkpoints, up to the one it stopped after
            last = run.get("stopped_after", n)
            assert run["curve"][-1]["n_edits"] == last
            assert [p["n_edits"] for p in run["curve"]] == [
                k for k in checkpoints(n, data["settings"]["every"]) if k <= last]
            for p in run["curve"]:
                for m in ("efficacy", "generality", "locality"):
                    assert 0 <= p[m]["lo"] <= p[m]["mean"] <= p[m]["hi"] <= 100
        if "none" in data["runs"]:
            assert data["runs"]["none"]["curve"][-1]["locality"]["mean"] == 100.0
        assert (folder / f"{path.stem}.md").is_file()


def test_a_stopped_lifelong_run_resumes_only_on_the_same_design(tmp_path: Path) -> None:
    settings = {"model": "m", "data": "d", "n": 4, "every": 2, "seed": 0, "case_ids": ["a", "b"],
                "command": "first"}
    run = {"curve": [], "retention": {}}
    _write_lifelong(tmp_path, "lifelong-n4", settings, {"none": run})
    assert (tmp_path / "lifelong-n4.md").is_file()
    again = {**settings, "command": "second"}  # the command line may differ, the design not
    assert _resumed_runs(tmp_path / "lifelong-n4.json", again) == {"none": run}
    assert _resumed_runs(tmp_path / "absent.json", again) == {}
    other = {**settings, "case_ids": ["a", "c"]}
    with pytest.raises(SystemExit, match="case_ids"):
        _resumed_runs(tmp_path / "lifelong-n4.json", other)


class _Stop(Exception):
    """Stands for a session that ends mid-run."""


def _cli_on_tiny(tiny: WhiteBoxRunner, tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the CLI's model loader at the tiny Llama; the reference data's path."""
    import harness.models.whitebox as whitebox

    real = Path(__file__).resolve().parents[3] / "../shared/reference-data/medversa/test.json"
    if not real.is_file():  # a user's clone has no shared/ beside it: say so, do not fail
        pytest.skip(f"the MedVersa reference data is not beside this clone: {real}")
    monkeypatch.setattr(whitebox, "ensure_hf_copy", lambda: tmp_path)
    monkeypatch.setattr(whitebox.WhiteBoxLM, "load", staticmethod(
        lambda folder: SimpleNamespace(model=tiny.model, tokenizer=tiny.tokenizer)))
    return real


def _stopping_after_first_point(monkeypatch: pytest.MonkeyPatch, editor_name: str) -> Any:
    """Make the CLI's ``run_lifelong`` raise :class:`_Stop` after ``editor_name``'s first
    point has been handed on (as a session's end would); returns the real function."""
    import benchmarks.medversa.lifelong as protocol

    full_run = protocol.run_lifelong

    def stop_after_first(runner: Any, editor: Any, cases: Any, every: int,
                         on_point: Any = None, resume: Any = None) -> Any:
        def once(point: CurvePoint) -> None:
            on_point(point)
            if editor.name == editor_name:
                raise _Stop

        return full_run(runner, editor, cases, every, on_point=once, resume=resume)

    monkeypatch.setattr(protocol, "run_lifelong", stop_after_first)
    return full_run


@pytest.mark.slow
def test_a_run_cut_short_keeps_its_curve_so_far_and_continues_from_its_checkpoint(
        tiny: WhiteBoxRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scored point is written at once, marked ``stopped_after`` until the last, with
    the editor's state beside it; a rerun of the same design continues a stopped editor
    from that checkpoint and keeps the finished ones."""
    import benchmarks.medversa.lifelong as protocol
    from benchmarks.medversa.lifelong_checkpoint import checkpoint_path

    real = _cli_on_tiny(tiny, tmp_path, monkeypatch)
    argv = ["--data", str(real), "--n", "4", "--every", "2", "--editors", "none,retrieval",
            "--out", str(tmp_path)]
    full_run = _stopping_after_first_point(monkeypatch, "retrieval")
    with pytest.raises(_Stop):
        protocol.main(argv)
    stored = json.loads((tmp_path / "lifelong-n4.json").read_text())["runs"]
    assert "stopped_after" not in stored["none"]
    assert [p["n_edits"] for p in stored["none"]["curve"]] == [2, 4]
    assert stored["retrieval"]["stopped_after"] == 2
    assert [p["n_edits"] for p in stored["retrieval"]["curve"]] == [2]
    assert "retrieval (after 2 edits)" in (tmp_path / "lifelong-n4.md").read_text()
    ckpt = checkpoint_path(tmp_path, "lifelong-n4", "retrieval")
    assert ckpt.is_file() and not checkpoint_path(tmp_path, "lifelong-n4", "none").exists()

    monkeypatch.setattr(protocol, "run_lifelong", full_run)
    assert protocol.main(argv) == 0
    again = json.loads((tmp_path / "lifelong-n4.json").read_text())["runs"]
    assert again["none"] == stored["none"]  # kept, not rerun
    assert "stopped_after" not in again["retrieval"]
    assert again["retrieval"]["resumed_after"] == [2]
    assert [p["n_edits"] for p in again["retrieval"]["curve"]] == [2, 4]
    assert again["retrieval"]["curve"][0] == stored["retrieval"]["curve"][0]
    assert not ckpt.exists()  # finished: the JSON holds the curve


def _without_timings(run: dict[str, Any]) -> dict[str, Any]:
    timing = {"edit_seconds", "eval_seconds"}
    return {"curve": [{k: v for k, v in p.items() if k not in timing} for p in run["curve"]],
            "retention": run["retention"], "scores": run["scores"]}


@pytest.mark.slow
def test_a_weight_editor_resumed_from_its_checkpoint_gives_the_uninterrupted_curve(
        tiny: WhiteBoxRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """FT-L stopped after 2 of 6 edits and rerun: the same per-case scores, curve and
    retention as a run that never stopped (the weights are loaded, not replayed)."""
    import benchmarks.medversa.lifelong as protocol

    real = _cli_on_tiny(tiny, tmp_path, monkeypatch)

    def argv(folder: Path) -> list[str]:
        return ["--data", str(real), "--n", "6", "--every", "2", "--editors", "ft-l",
                "--out", str(folder)]

    assert protocol.main(argv(tmp_path / "straight")) == 0
    full_run = _stopping_after_first_point(monkeypatch, "ft-l")
    with pytest.raises(_Stop):
        protocol.main(argv(tmp_path / "stopped"))
    monkeypatch.setattr(protocol, "run_lifelong", full_run)
    capsys.readouterr()
    assert protocol.main(argv(tmp_path / "stopped")) == 0
    assert "[ft-l] resuming after 2 edits" in capsys.readouterr().out
    straight, resumed = (json.loads((tmp_path / d / "lifelong-n6.json").read_text())["runs"]
                         ["ft-l"] for d in ("straight", "stopped"))
    assert resumed["resumed_after"] == [2] and "resumed_after" not in straight
    assert _without_timings(resumed) == _without_timings(straight)
    assert [p["n_edits"] for p in straight["curve"]] == [2, 4, 6]


def test_a_checkpoint_of_other_editor_settings_is_not_resumed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.medversa.lifelong_checkpoint import load_checkpoint, save_checkpoint

    point = CurvePoint(2, ["a", "b"], [{"efficacy": 1.0}, {"efficacy": 0.0}], 1.0, 0.5)
    design = {"model": "m", "n": 4, "every": 2, "case_ids": ["a", "b", "c", "d"]}
    path = tmp_path / "ckpt.pt"
    save_checkpoint(path, design=design, editor="ft-l", settings={"steps": 25},
                    points=[point], state={"edits": [["p", "t"], ["q", "u"]]},
                    wall_seconds=3.0, build_seconds=0.1, resumed_after=[])
    saved = load_checkpoint(path, design=design, editor="ft-l", settings={"steps": 25})
    assert saved is not None and saved.resume.points == [point] and saved.wall_seconds == 3.0
    assert load_checkpoint(path, design=design, editor="ft-l", settings={"steps": 10}) is None
    assert "editor settings differ (steps)" in capsys.readouterr().out
    assert load_checkpoint(path, design={**design, "n": 8}, editor="ft-l",
                           settings={"steps": 25}) is None
    assert "design differs (n)" in capsys.readouterr().out
    assert load_checkpoint(path, design=design, editor="rome", settings={"steps": 25}) is None
    assert load_checkpoint(tmp_path / "absent.pt", design=design, editor="ft-l",
                           settings={}) is None


def test_resume_refuses_points_of_another_run(tiny: WhiteBoxRunner) -> None:
    from benchmarks.medversa.protocol import Resume

    cases = make_units(load_dataset("sample"), "sequential", 4, 0)[0]
    other = CurvePoint(2, ["x", "y"], [{}, {}], 0.0, 0.0)
    with pytest.raises(ValueError, match="not this run's first checkpoints"):
        run_lifelong(tiny, make_editor("none"), cases, every=2,
                     resume=Resume([other], {"edits": [["p", "t"], ["q", "u"]]}))
