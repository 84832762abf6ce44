"""The SCOUT game task end to end through ``inspect_ai.eval``: a model that plays the BFS
path solves the instance, one that walks into walls does not, and the scorer's keys come
from replaying the recorded moves (a real log record)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.tool import ToolInfo

from benchmarks.paper_tasks.scout.scout import TEST_OFFSET, instance_seed, scout
from environments.scout import make_game, shortest_path
from harness.models.scripted import PolicyResult, scripted_policy, tool_call

_QUEUE: list[str] = []
"""The directions the test policy plays, in order (offline: scripted/, not mockllm/,
which counts tokens with tiktoken and so needs the network)."""


@scripted_policy("scout-test-moves")
def _queued(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
            args: dict[str, Any]) -> PolicyResult:
    return tool_call("move", {"direction": _QUEUE.pop(0)}, input)


def _play(tmp_path: Path, game: str, directions: list[str]) -> Any:
    task = scout(games=game, n=1)
    _QUEUE[:] = directions
    (log,) = inspect_eval(task, model="scripted/scout-test-moves", log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    assert log.samples is not None
    return log.samples[0]


@pytest.mark.parametrize("game", ["frozenlake", "sokoban", "sliding"])
def test_the_bfs_path_solves_the_sample(tmp_path: Path, game: str) -> None:
    spec = scout(games=game, n=1).dataset[0].metadata["spec"]
    path = shortest_path(make_game(spec)) or []
    sample = _play(tmp_path, game, path + ["up"] * 3)  # spare outputs stay unused
    value = sample.scores["scout_score"].value
    assert value["solved"] == 1.0 and value["efficiency"] == 1.0
    assert value["moves"] == len(path) and value["illegal"] == 0
    assert sample.scores["scout_score"].answer == " ".join(path)
    assert sample.id == f"{game}-test-s{TEST_OFFSET}"


def test_illegal_moves_are_counted_and_do_not_solve(tmp_path: Path) -> None:
    sample = _play(tmp_path, "frozenlake", ["up"] * 40)  # off the lake from the start
    value = sample.scores["scout_score"].value
    limit = sample.metadata["move_limit"]
    assert value["solved"] == 0.0 and value["moves"] == limit == value["illegal"]
    tools = [m for m in sample.messages if m.role == "tool"]
    assert len(tools) == limit and "off the lake" in tools[0].text


def test_splits_are_disjoint_and_ids_stable() -> None:
    train = scout(n=3, split="train")
    test = scout(n=3, split="test")
    assert {s.id for s in train.dataset}.isdisjoint({s.id for s in test.dataset})
    assert [s.id for s in scout(n=3).dataset] == [s.id for s in test.dataset]
    assert instance_seed("test", 0, 2) == TEST_OFFSET + 2
    meta = test.metadata or {}
    assert meta["simulator"] == "environments.scout:make_game" and meta["tool"]["name"] == "move"
    with pytest.raises(ValueError, match="unknown games"):
        scout(games="chess")


def test_the_oracle_solves_every_instance_through_the_text_and_tool(tmp_path: Path) -> None:
    import benchmarks.paper_tasks.scout.policies  # noqa: F401  (registers scripted/scout-oracle)

    (log,) = inspect_eval(scout(n=2), model="scripted/scout-oracle", log_dir=str(tmp_path),
                          display="none")
    assert log.status == "success", log.error
    values = [s.scores["scout_score"].value for s in log.samples or []]
    assert len(values) == 6
    assert all(v["solved"] == 1.0 and v["efficiency"] == 1.0 for v in values)
