"""Checkpoints of a lifelong run, so a weight editor's 1,000-edit curve survives a session.

One weight edit costs seconds of CPU, so N = 1000 for ROME or FT-L is hours of one core,
longer than a session. At every scored point the CLI saves the points so far and the
editor's state (:meth:`~harness.plugins.editor.Editor.save_state`: the touched tensors, or GRACE's
codebook) to ``<out>/.checkpoints/<stem>.<editor>.pt``; a rerun of the same design loads it
and continues from the next edit instead of the first. Because no editor here draws random
numbers and scoring is deterministic, the resumed curve is the uninterrupted one (tested).

A checkpoint is used only when it was written for the same design (model, data, n, every,
seed, case ids), the same editor name and the same editor settings; otherwise the reason is
printed and the run starts from the first edit. Nothing is deleted until the editor's run
finishes. The files are local (git-ignored): a few MB per editor, one per run.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.medversa.protocol import CurvePoint, Resume

FORMAT = 1


@dataclass
class Saved:
    """A loaded checkpoint: what to resume from, and the wall time already spent on it."""

    resume: Resume
    wall_seconds: float
    build_seconds: float
    resumed_after: list[int] = field(default_factory=list)
    """Edit counts at which earlier segments of this run stopped (empty: never resumed)."""


def checkpoint_path(out: Path, stem: str, editor: str) -> Path:
    """Where ``editor``'s checkpoint of the run ``<out>/<stem>.json`` lives."""
    return out / ".checkpoints" / f"{stem}.{editor}.pt"


def save_checkpoint(path: Path, *, design: dict[str, Any], editor: str,
                    settings: dict[str, Any], points: list[CurvePoint],
                    state: dict[str, Any], wall_seconds: float, build_seconds: float,
                    resumed_after: list[int]) -> None:
    """Write the checkpoint atomically (a stop while writing leaves the previous one)."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"format": FORMAT, "design": design, "editor": editor, "settings": settings,
               "points": [asdict(p) for p in points], "state": state,
               "wall_seconds": wall_seconds, "build_seconds": build_seconds,
               "resumed_after": list(resumed_after)}
    partial = path.with_name(path.name + ".partial")
    torch.save(payload, partial)
    os.replace(partial, path)


def load_checkpoint(path: Path, *, design: dict[str, Any], editor: str,
                    settings: dict[str, Any]) -> Saved | None:
    """The checkpoint at ``path`` when it matches this run; ``None`` (with the reason
    printed) when there is none or it was written for something else."""
    import torch

    if not path.is_file():
        return None
    payload = torch.load(path, weights_only=True)
    differing = [k for k in sorted(set(design) | set(payload.get("design", {})))
                 if payload.get("design", {}).get(k) != design.get(k)]
    if payload.get("format") != FORMAT:
        reason = f"format {payload.get('format')!r}, expected {FORMAT}"
    elif payload.get("editor") != editor:
        reason = f"it is {payload.get('editor')!r}'s"
    elif differing:
        reason = f"design differs ({', '.join(differing)})"
    elif payload.get("settings") != settings:
        changed = sorted(k for k in set(settings) | set(payload.get("settings", {}))
                         if payload.get("settings", {}).get(k) != settings.get(k))
        reason = f"editor settings differ ({', '.join(changed)})"
    else:
        points = [CurvePoint(**p) for p in payload["points"]]
        print(f"[{editor}] resuming after {points[-1].n_edits} edits from {path}", flush=True)
        return Saved(Resume(points, payload["state"]), float(payload["wall_seconds"]),
                     float(payload["build_seconds"]), list(payload["resumed_after"]))
    print(f"[{editor}] not resuming from {path}: {reason}; starting from the first edit",
          flush=True)
    return None
