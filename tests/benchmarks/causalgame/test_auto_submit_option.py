"""-T auto_submit: an evaluation-setup switch of its own, independent of agent and protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval

import benchmarks.causalgame.policies  # noqa: F401  (registers scripted/*)
from benchmarks.causalgame.causalgame import causalgame


def _score(tmp: Path, **args: Any) -> Any:
    log = inspect_eval(
        causalgame(epochs=1, scenarios="antenna_trap", sandbox="none", **args),
        model="scripted/chatter", log_dir=str(tmp), display="none",
    )[0]
    assert log.status == "success", log.error
    sample = (log.samples or [])[0]
    return sample.scores["causalgame_scorer"]


@pytest.mark.parametrize(
    ("protocol", "auto_submit", "auto", "na", "zero"),
    [
        ("suite", None, True, 0.0, False),        # the benchmark agent's default
        ("suite", False, False, 0.0, True),       # off: an unsubmitted run scores 0
        ("published", None, False, 1.0, False),   # the published protocol: N/A
        ("published", True, True, 0.0, False),    # on: the fallback design, even there
    ],
)
def test_auto_submit_setting_decides_the_unsubmitted_run(
    tmp_path: Path, protocol: str, auto_submit: bool | None, auto: bool, na: float, zero: bool
) -> None:
    score = _score(tmp_path, protocol=protocol, auto_submit=auto_submit)
    assert score.metadata["auto_submitted"] is auto
    assert score.metadata["auto_submit"] is auto_submit
    assert score.value["na"] == na
    if zero:
        assert score.value["survival"] == 0.0 and score.metadata["submitted"] is False
    elif na:
        assert score.value["survival"] is None
    else:
        assert 0.0 < score.value["survival"] < 1.0


def test_max_tokens_caps_every_reply() -> None:
    task = causalgame(scenarios="antenna_trap", sandbox="none", max_tokens=160)
    assert task.config.max_tokens == 160
    assert causalgame(scenarios="antenna_trap", sandbox="none").config.max_tokens is None
