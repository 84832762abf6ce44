"""The ``-T checkpoint=...`` option of long-episode benchmarks, parsed once for all of them.

CausalGame and FormulaCode (issue 52) turn Inspect's mid-sample checkpoints on from a task
argument. Both take the same spellings, so a study or a user writes one value for either,
and the parser lives here rather than in one benchmark that the other would import.
"""

from __future__ import annotations

import re
from datetime import timedelta

from inspect_ai.util import CheckpointConfig, TimeInterval, TurnInterval

CHECKPOINT_SPELLINGS = "off, turns, turns:N, N, <N>s or <N>m"


def checkpoint_config(checkpoint: str | int | bool | None) -> CheckpointConfig | None:
    """The task's checkpoint layer from ``-T checkpoint=...``.

    ``off`` (also ``none``/``false``/``0``/unset): no task-level opinion, so Inspect's
    own ``--checkpoint`` still applies. ``turns`` (or ``on``/``true``): a checkpoint at every
    agent turn boundary; ``turns:N`` or a bare ``N``: every N turns; ``5m``/``90s``: every
    5 minutes / 90 seconds of wall time (checked at turn boundaries). Inspect 0.3.285 keeps
    the checkpoint folders beside the log (its ``retention`` is parsed but not acted on).
    """
    if checkpoint is None or checkpoint is False:
        return None
    text = str(checkpoint).strip().lower()
    if text in ("off", "none", "false", "0", ""):
        return None
    if text in ("on", "true", "turns"):
        return CheckpointConfig(trigger=TurnInterval(every=1))
    turns = re.fullmatch(r"(?:turns:)?(\d+)", text)
    if turns:
        return CheckpointConfig(trigger=TurnInterval(every=int(turns.group(1))))
    timed = re.fullmatch(r"(\d+(?:\.\d+)?)(s|m)", text)
    if timed:
        seconds = float(timed.group(1)) * (60 if timed.group(2) == "m" else 1)
        return CheckpointConfig(trigger=TimeInterval(every=timedelta(seconds=seconds)))
    raise ValueError(f"checkpoint must be {CHECKPOINT_SPELLINGS}; got {checkpoint!r}")
