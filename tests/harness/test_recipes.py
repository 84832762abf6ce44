"""The recipe path without torch: a throw-away recipe registered here, built into a tmp cache.

Checks the cache key (options with defaults, seed, version, data), that a product is built
once and reused, that a failing build leaves nothing behind, the training-log reader, the
model-arg references a study binds, and the ``harness recipes`` commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness import registry
from harness.cli import app
from harness.corpus import Corpus
from harness.factorial.study import parse_study
from harness.plugins import recipe as recipes
from harness.results import read_product, read_training_log

NAME = "toy-counter"
CALLS: list[dict[str, Any]] = []


def _toy(options: dict[str, Any], corpus: Corpus, out_dir: Path, seed: int,
         log: recipes.TrainLog) -> None:
    """Writes a file that records its inputs; logs ``steps`` steps."""
    CALLS.append({"options": dict(options), "seed": seed})
    if options["fail"]:
        (out_dir / "half.bin").write_bytes(b"x")
        raise RuntimeError("training diverged")
    for step in range(1, int(options["steps"]) + 1):
        log.step(step, loss=1.0 / step, tokens=10, flops=100, lr=0.5)
    (out_dir / "weights.json").write_text(json.dumps({"seed": seed, **options,
                                                      "train_len": len(corpus.train)}))


@pytest.fixture(autouse=True)
def toy_recipe() -> Any:
    CALLS.clear()
    recipes.recipe(NAME, version="1", defaults={"steps": 3, "lr": 0.5, "mode": "a",
                                                "fail": False, "corpus": "stdlib"},
                   choices={"mode": ("a", "b")}, summary="a toy")(_toy)
    yield
    registry.unregister("recipe", NAME)


def test_options_are_typed_defaulted_and_checked() -> None:
    assert recipes.resolve_options(NAME) == {"steps": 3, "lr": 0.5, "mode": "a", "fail": False,
                                             "corpus": "stdlib"}
    got = recipes.resolve_options(NAME, {"steps": "7", "lr": "1", "fail": "true"})
    assert got["steps"] == 7 and got["lr"] == 1.0 and isinstance(got["lr"], float)
    assert got["fail"] is True
    with pytest.raises(recipes.RecipeError, match="no option 'stpes'.*steps"):
        recipes.resolve_options(NAME, {"stpes": 1})
    with pytest.raises(recipes.RecipeError, match="one of a, b"):
        recipes.resolve_options(NAME, {"mode": "c"})
    with pytest.raises(recipes.RecipeError, match="expected int"):
        recipes.resolve_options(NAME, {"steps": "many"})
    with pytest.raises(recipes.RecipeError, match="unknown recipe 'nope'"):
        recipes.resolve_options("nope")


def test_key_covers_recipe_version_options_data_and_seed() -> None:
    base = recipes.product_key(NAME, "1", {"a": 1}, "fp", 0)
    assert base == recipes.product_key(NAME, "1", {"a": 1}, "fp", 0)
    others = [recipes.product_key("other", "1", {"a": 1}, "fp", 0),
              recipes.product_key(NAME, "2", {"a": 1}, "fp", 0),
              recipes.product_key(NAME, "1", {"a": 2}, "fp", 0),
              recipes.product_key(NAME, "1", {"a": 1}, "fp2", 0),
              recipes.product_key(NAME, "1", {"a": 1}, "fp", 1)]
    assert len({base, *others}) == 6


def test_build_once_then_reuse(tmp_path: Path) -> None:
    first = recipes.build_product(NAME, {}, seed=0, cache_root=tmp_path)
    again = recipes.build_product(NAME, {"steps": 3}, seed=0, cache_root=tmp_path)  # = default
    assert first == again and len(CALLS) == 1
    assert first == recipes.product_dir(NAME, {"steps": "3"}, 0, tmp_path)
    assert first.parent == tmp_path / NAME and len(first.name) == 16
    other_seed = recipes.build_product(NAME, {}, seed=1, cache_root=tmp_path)
    other_opt = recipes.build_product(NAME, {"mode": "b"}, seed=0, cache_root=tmp_path)
    assert len({first, other_seed, other_opt}) == 3 and len(CALLS) == 3
    product = read_product(first)
    assert product["recipe"] == NAME and product["seed"] == 0
    assert product["options"]["steps"] == 3 and first.name == product["hash"][:16]
    assert product["data"]["corpus"] == "stdlib" and product["data"]["fingerprint"]
    assert product["totals"]["steps"] == 3 and product["totals"]["flops"] == 300
    assert product["totals"]["tokens"] == 30 and product["totals"]["final_loss"] == 1 / 3
    assert not [p for p in (tmp_path / NAME).iterdir() if p.name.startswith(".") and p.is_dir()]


def test_a_failed_build_leaves_no_product(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="diverged"):
        recipes.build_product(NAME, {"fail": True}, cache_root=tmp_path)
    leftovers = [p for p in (tmp_path / NAME).iterdir() if p.is_dir()]
    assert leftovers == []
    assert not recipes.product_dir(NAME, {"fail": True}, 0, tmp_path).exists()


def test_training_log_reads_as_a_frame(tmp_path: Path) -> None:
    folder = recipes.build_product(NAME, {"steps": 4}, seed=2, cache_root=tmp_path)
    frame = read_training_log(folder)
    assert frame["step"].to_list() == [1, 2, 3, 4]
    assert frame["tokens_total"].to_list() == [10, 20, 30, 40]
    assert frame["flops_total"][-1] == 400 and frame["loss"][0] == 1.0
    assert (frame["wall_s"].diff().drop_nulls() >= 0).all()
    assert set(frame["recipe"]) == {NAME} and set(frame["seed"]) == {2}
    assert set(frame["opt_steps"]) == {"4"} and set(frame["opt_mode"]) == {"a"}
    assert "lr" in frame.columns
    with pytest.raises(FileNotFoundError, match="train_log"):
        read_training_log(tmp_path)


def test_references_resolve_to_the_product(tmp_path: Path) -> None:
    assert recipes.parse_product_ref(f"recipe:{NAME}?mode=b&seed=3") == (NAME, {"mode": "b"}, 3)
    assert recipes.parse_product_ref(f"recipe:{NAME}") == (NAME, {}, 0)
    expected = str(recipes.product_dir(NAME, {"mode": "b"}, 3, tmp_path))
    by_keys = recipes.resolve_model_args(
        {"recipe": NAME, "recipe.mode": "b", "recipe.seed": 3, "batch_size": 4}, tmp_path)
    assert by_keys == {"model_path": expected, "batch_size": 4}
    by_ref = recipes.resolve_model_args({"model_path": f"recipe:{NAME}?mode=b&seed=3"},
                                        tmp_path)
    assert by_ref == {"model_path": expected} and len(CALLS) == 1
    assert recipes.resolve_model_args({"model_path": "/some/dir", "x": 1}) == {
        "model_path": "/some/dir", "x": 1}
    with pytest.raises(recipes.RecipeError, match="without recipe=NAME"):
        recipes.resolve_model_args({"recipe.mode": "b"})
    with pytest.raises(recipes.RecipeError, match="not both"):
        recipes.resolve_model_args({"recipe": NAME, "model_path": "/x"})


def test_study_factors_bind_recipe_options(tmp_path: Path) -> None:
    study = parse_study(f"""
name: toy
response:
  tasks: [harness/arithmetic]
factors:
  - {{name: model, binds_to: model, levels: [whitebox/toy]}}
  - name: recipe
    binds_to: model_args
    levels: [{{label: toy, value: {{recipe: {NAME}, recipe.seed: 0}}}}]
  - {{name: mode, binds_to: model_args, key: recipe.mode, levels: [a, b]}}
  - {{name: steps, binds_to: model_args, key: recipe.steps, levels: [1, 2]}}
""")
    paths = {recipes.resolve_model_args(cell.model_args, tmp_path)["model_path"]
             for cell in study.cells()}
    assert len(paths) == 4 and len(CALLS) == 4
    assert {(c["options"]["mode"], c["options"]["steps"]) for c in CALLS} == {
        ("a", 1), ("a", 2), ("b", 1), ("b", 2)}


def test_cli_lists_and_builds(tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(app, ["recipes", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = {r["name"]: r for r in json.loads(listed.output)}
    assert rows[NAME]["defaults"]["steps"] == 3 and rows[NAME]["choices"] == {"mode": ["a", "b"]}
    built = runner.invoke(app, ["recipes", "build", NAME, "-o", "steps=2", "-o", "mode=b",
                                "--seed", "5", "--cache", str(tmp_path)])
    assert built.exit_code == 0, built.output
    folder = Path(built.output.strip().splitlines()[-1])
    assert folder == recipes.product_dir(NAME, {"steps": 2, "mode": "b"}, 5, tmp_path)
    assert read_product(folder)["totals"]["steps"] == 2
    bad = runner.invoke(app, ["recipes", "build", NAME, "-o", "bogus=1", "--cache",
                              str(tmp_path)])
    assert bad.exit_code == 1 and "no option 'bogus'" in bad.output
    methods = json.loads(runner.invoke(app, ["list", "--json"]).output)["methods"]
    assert any(m["name"] == NAME and m["kind"] == "recipe" for m in methods)
