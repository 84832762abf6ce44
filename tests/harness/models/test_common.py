"""The pieces the offline providers share: ``-M`` arg handling, sampling defaults, reply output.

Fast (no model is loaded): these pin the rules that ``embedded/`` and ``whitebox/`` both rely
on, so a change here shows up without the slow model tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from inspect_ai.model import GenerateConfig, ModelOutput
from inspect_ai.tool import ToolInfo, ToolParam, ToolParams

from harness.models._common import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOP_P,
    LocalModelAPI,
    make_usage,
    reply_output,
    sampling,
    split_reply,
    stop_reason,
)
from harness.models.scripted import ScriptedModelAPI
from harness.models.toolprompt import CLOSE_TAG, OPEN_TAG

ADD = ToolInfo(
    name="add",
    description="Add two integers.",
    parameters=ToolParams(
        properties={"x": ToolParam(type="integer"), "y": ToolParam(type="integer")},
        required=["x", "y"],
    ),
)
CALL_TEXT = OPEN_TAG + json.dumps({"name": "add", "arguments": {"x": 1, "y": 2}}) + CLOSE_TAG


class _Bare(LocalModelAPI):
    provider = "bare"

    async def generate(self, *args: Any, **kwargs: Any) -> ModelOutput:
        raise NotImplementedError


def test_unknown_model_args_name_the_provider_and_the_args() -> None:
    with pytest.raises(ValueError, match=r"unknown model args for bare/: \['nctx', 'zz'\]"):
        _Bare("m", zz=1, nctx=4096)
    api = _Bare("m", base_url="http://127.0.0.1:1", api_key="k")
    assert (api.model_name, api.base_url, api.api_key, api.api_key_vars) == (
        "m",
        "http://127.0.0.1:1",
        "k",
        [],
    )


@pytest.mark.slow
def test_whitebox_rejects_unknown_args_before_loading_anything() -> None:
    # runs in a child so the check "no torch was imported" is not spoiled by other tests
    code = (
        "import sys\n"
        "from harness.models.whitebox import WhiteBoxModelAPI\n"
        "try:\n"
        "    WhiteBoxModelAPI('smollm2-135m', devcie='cpu')\n"
        "except ValueError as ex:\n"
        "    print(ex)\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["unknown model args for whitebox/: ['devcie']", "False False"]


def test_scripted_policy_module_is_not_a_policy_arg() -> None:
    api = ScriptedModelAPI("echo", policy_module="json", answer="x")
    assert api.policy_args == {"answer": "x"}


def test_sampling_defaults_fill_only_unset_values() -> None:
    assert sampling(GenerateConfig()) == (DEFAULT_MAX_TOKENS, DEFAULT_TEMPERATURE, DEFAULT_TOP_P)
    # zero is a choice (greedy / no nucleus), not an absence
    assert sampling(GenerateConfig(max_tokens=5, temperature=0.0, top_p=0.0)) == (5, 0.0, 0.0)


@pytest.mark.parametrize(
    ("finish", "has_calls", "expected"),
    [
        ("model_length", True, "model_length"),
        ("length", True, "tool_calls"),
        ("stop", True, "tool_calls"),
        ("length", False, "max_tokens"),
        ("stop", False, "stop"),
        (None, False, "stop"),
    ],
)
def test_stop_reason_precedence(finish: str | None, has_calls: bool, expected: str) -> None:
    assert stop_reason(finish, has_calls) == expected


def test_tool_choice_none_keeps_tags_as_text() -> None:
    assert split_reply(f"  {CALL_TEXT} ", [ADD], "none") == (CALL_TEXT, [])
    content, calls = split_reply(CALL_TEXT, [ADD], "auto")
    assert [(c.function, c.arguments) for c in calls] == [("add", {"x": 1, "y": 2})]


def test_usage_total_is_the_sum_unless_reported() -> None:
    assert make_usage(3, 4).total_tokens == 7
    assert make_usage(3, 4, 9).total_tokens == 9


def test_reply_output_with_and_without_calls() -> None:
    out = reply_output("m", CALL_TEXT, [ADD], "auto", "stop", make_usage(10, 5))
    assert out.model == "m" and out.message.model == "m" and out.message.source == "generate"
    assert out.stop_reason == "tool_calls"
    assert [c.function for c in out.message.tool_calls or []] == ["add"]
    assert out.usage is not None and out.usage.total_tokens == 15

    plain = reply_output("m", " hello ", [ADD], "auto", "length", make_usage(1, 1))
    assert plain.completion == "hello" and plain.stop_reason == "max_tokens"
    assert plain.message.tool_calls is None
