"""Graded format credit on real SmolLM2-135M replies to the circle-packing prompt (taken
from a journal of the ``thetaevolve_ttrl`` study, shortened): prose earns nothing, a code
block that copies the parent's lines earns some, a SEARCH/REPLACE block more, and the
reward it adds keeps every no-diff reply at or below the -0.3 of an identical child."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessage, GenerateConfig
from inspect_ai.scorer import match
from inspect_ai.solver import use_tools
from inspect_ai.tool import Tool, ToolInfo, tool

from harness.models.scripted import scripted_policy
from methods.thetaevolve.evolve.format_credit import format_credit
from methods.thetaevolve.evolve.rewards import Outcome, RewardConfig, reward_for
from methods.thetaevolve.thetaevolve import STORE_CANDIDATES, thetaevolve

PARENT = '''import numpy as np

# EVOLVE-BLOCK-START
ITERATIONS = 0


def max_radii(centers):
    """Radii bounded by the walls, then shrunk pair by pair until nothing overlaps."""
    radii = np.minimum.reduce([centers[:, 0], centers[:, 1], 1 - centers[:, 0]])
    return radii
# EVOLVE-BLOCK-END
'''

PROSE = "The score is to make the score higher, not to improve the program by any amount."
COPIED = ("The code is still the same, but with some tweaks to make the score higher.\n\n"
          "Here's a revised version of the code:\n\n```python\nimport numpy as np\n\n"
          "def max_radii(centers):\n"
          '    """Radii bounded by the walls, then shrunk pai')
INVENTED = ("```python\nimport json\n\ndef max_radii(centers):\n    max_max = max(\n"
            "        [max(centers[i] * max(cells[:, 0], 1]) for i in range(26)]\n    )\n")
MISSED = ("<<<<<<< SEARCH\nITERATIONS = 10\n=======\nITERATIONS = 500\n>>>>>>> REPLACE\n")
HALF = MISSED + "<<<<<<< SEARCH\nITERATIONS = 0\n=======\nITERATIONS = 50\n>>>>>>> REPLACE\n"
VALID = "<<<<<<< SEARCH\nITERATIONS = 0\n=======\nITERATIONS = 500\n>>>>>>> REPLACE\n"


def test_prose_earns_nothing() -> None:
    credit = format_credit(PARENT, PROSE)
    assert credit.credit == 0.0


def test_copied_program_lines_earn_more_than_invented_code() -> None:
    copied, invented = format_credit(PARENT, COPIED), format_credit(PARENT, INVENTED)
    assert copied.fence == invented.fence == 1.0  # an unclosed block (cut by the cap) counts
    assert copied.grounded == pytest.approx(2 / 3)  # 2 of its 3 code lines are the parent's
    assert invented.grounded == pytest.approx(1 / 5)
    assert copied.credit > invented.credit > format_credit(PARENT, PROSE).credit


def test_blocks_earn_by_how_much_of_their_search_text_is_found() -> None:
    missed, half, valid = (format_credit(PARENT, r) for r in (MISSED, HALF, VALID))
    assert (missed.marker, missed.block, missed.found) == (1.0, 1.0, 0.0)
    assert half.found == pytest.approx(0.5)
    assert valid.found == 1.0 and valid.grounded == pytest.approx(1 / 2)
    assert valid.credit > half.credit > missed.credit > format_credit(PARENT, COPIED).credit


def test_the_credit_only_moves_no_diff_rewards_and_is_off_by_default() -> None:
    credit = format_credit(PARENT, COPIED).credit
    assert reward_for(Outcome.NO_DIFF, None, RewardConfig(), credit) == -0.4
    on = RewardConfig(format_weight=0.1)
    assert reward_for(Outcome.NO_DIFF, None, on, credit) == pytest.approx(-0.4 + 0.1 * credit)
    assert reward_for(Outcome.NO_DIFF, None, on, 1.0) <= reward_for(Outcome.IDENTICAL, None, on)
    assert reward_for(Outcome.EXEC_ERROR, None, on, 1.0) == -0.2
    with pytest.raises(ValueError, match="format_weight"):
        RewardConfig(format_weight=0.2)
    with pytest.raises(ValueError, match="format credit"):
        reward_for(Outcome.NO_DIFF, None, on, 1.5)


@scripted_policy("format-credit-toy")
def _toy(input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig,
         args: dict[str, Any]) -> str:
    """Reply ``TOY_REPLIES[slot]`` (a response's seed is ``step * 1000 + slot``)."""
    return TOY_REPLIES[(config.seed or 0) % 1000]


def _evolve_with(replies: list[str], reward_format: float, tmp: Path) -> list[dict[str, Any]]:
    """One ThetaEvolve step whose model answers ``replies`` (in order), on PROGRAM_TOY."""

    seen: list[str] = []

    @tool
    def never_called() -> Tool:
        async def execute(code: str) -> str:
            """Scores the initial program; no reply here proposes a child to evaluate.

            Args:
                code: Program source.
            """
            seen.append(code)
            return json.dumps({"ran": True, "valid": True, "combined_score": 0.5,
                               "objective": 0.5, "reason": "ok"})

        return execute

    task = Task(dataset=[Sample(id="toy", input="Make ITERATIONS large.",
                                metadata={"initial_program": PROGRAM_TOY})],
                setup=use_tools(never_called()),
                solver=thetaevolve(steps=1, parents_per_step=1,
                                   responses_per_parent=len(replies), num_islands=1,
                                   reward_format=reward_format, evaluator_tool="never_called",
                                   checkpoint_dir=str(tmp / f"ckpt-{reward_format}")),
                scorer=match())
    log = inspect_eval(task, model="scripted/format-credit-toy", display="none",
                       log_dir=str(tmp / "logs"))[0]
    assert log.status == "success", log.error
    assert log.samples and seen == [PROGRAM_TOY]  # only the initial program was run
    return sorted(log.samples[0].store[STORE_CANDIDATES], key=lambda c: c["slot"])


PROGRAM_TOY = "# EVOLVE-BLOCK-START\nITERATIONS = 0\n# EVOLVE-BLOCK-END\nprint('hi')\n"
TOY_REPLIES = ["I would keep the program as it is.",
               "Here is a better one:\n```python\nITERATIONS = 0\nITERATIONS += 1",  # cut off
               "<<<<<<< SEARCH\nITERATIONS = 7\n=======\nITERATIONS = 9\n>>>>>>> REPLACE\n"]


def test_thetaevolve_turns_the_credit_into_mixed_no_diff_rewards(tmp_path: Path) -> None:
    on = _evolve_with(TOY_REPLIES, 0.1, tmp_path)
    assert [c["outcome"] for c in on] == ["no_diff"] * 3
    assert [c["edit"] for c in on] == ["none", "none", "diff_failed"]
    assert [c["format_credit"] for c in on] == pytest.approx([0.0, 0.3, 0.4])
    assert [c["reward"] for c in on] == pytest.approx([-0.4, -0.37, -0.36])
    off = _evolve_with(TOY_REPLIES, 0.0, tmp_path)
    assert [c["reward"] for c in off] == [-0.4] * 3  # the paper's penalties, a flat group
