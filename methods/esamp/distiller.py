"""Does ESamp's distiller learn? Its loss curves, read back from a study's logs::

    harness method esamp-distiller methods/studies/esamp_long/logs/main \\
        --out methods/studies/esamp_long/distiller

writes ``OUT/summary.json`` and ``OUT/summary.md`` (a study's ``summaries:`` entry, so
``harness study regenerate --check`` reruns it): per arm (the study's ``method`` factor)
the items, the replies' mean length in tokens, and where the arm ran ESamp, the
distiller's trained steps and its loss at the start and the end of each prompt's
decoding: the mean of the first and last ``LOSS_WINDOW`` steps (``esamp_loss_head`` /
``esamp_loss_tail``, recorded by :func:`methods.esamp.esamp.loss_summary` into each
reply's metadata and copied into the score's metadata by the probe's scorer), their
paired difference over items with a t interval (:func:`harness.stats.paired_difference_ci`),
the share of items whose loss fell, and the mean curve. Why: ESamp's novelty term is the
distiller's error; if the error does not fall as a prompt's samples are decoded, the
distiller has learnt nothing and the reweighting is only a temperature change (issue 49).
Logs are read only through
:func:`harness.results.read_score_metadata`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from harness.results import read_score_metadata
from harness.stats import mean_ci, paired_difference_ci
from methods.esamp.esamp import LOSS_WINDOW

SCORER = "pass_at_k"
FACTOR = "method"


def load(log_dir: str | Path, scorer: str = SCORER, factor: str = FACTOR) -> pl.DataFrame:
    """One row per item and arm: the arm's level of ``factor``, the sample id, the replies'
    mean tokens and the distiller's steps, head and tail loss and curve (null without)."""
    raw = read_score_metadata(log_dir, scorer, once=True)  # each sample once
    rows = []
    for eval_meta, sample_id, meta_json in raw.select("eval_metadata", "sample_id",
                                                      "metadata").iter_rows():
        levels = (json.loads(eval_meta or "{}").get("factors") or {})
        meta = json.loads(meta_json or "{}")
        rows.append({"arm": str(levels.get(factor)), "sample_id": sample_id,
                     "tokens": meta.get("reply_tokens_mean"),
                     "steps": meta.get("esamp_trained_steps"),
                     "head": meta.get("esamp_loss_head"), "tail": meta.get("esamp_loss_tail"),
                     "curve": meta.get("esamp_loss_curve")})
    schema = {"arm": pl.String(), "sample_id": pl.String(), "tokens": pl.Float64(),
              "steps": pl.Float64(), "head": pl.Float64(), "tail": pl.Float64(),
              "curve": pl.List(pl.Float64())}
    return pl.DataFrame(rows, schema=schema)


def _interval(est: Any) -> dict[str, float]:
    return {"estimate": round(est.estimate, 4), "lo": round(est.lo, 4), "hi": round(est.hi, 4),
            "n": est.n}


def summarise(frame: pl.DataFrame) -> dict[str, Any]:
    """Per arm: items, mean reply tokens (CI over items) and, for arms with a distiller,
    its loss head vs tail (paired over items), the share of items whose loss fell, and the
    mean curve (positionwise over items whose curve has the full length)."""
    arms: dict[str, Any] = {}
    for arm in sorted(frame.get_column("arm").unique().to_list()):
        part = frame.filter(pl.col("arm") == arm)
        out: dict[str, Any] = {"items": part.height,
                               "reply_tokens": _interval(mean_ci(part.get_column("tokens")))}
        trained = part.filter(pl.col("head").is_not_null() & pl.col("tail").is_not_null())
        if trained.height:
            head, tail = trained.get_column("head"), trained.get_column("tail")
            curves = [c for c in trained.get_column("curve").to_list() if c]
            width = max(len(c) for c in curves) if curves else 0
            full = [c for c in curves if len(c) == width]
            out["distiller"] = {
                "items": trained.height,
                "window": LOSS_WINDOW,
                "trained_steps_mean": round(sum(trained.get_column("steps").to_list())
                                            / trained.height, 1),
                "loss_head": _interval(mean_ci(head)),
                "loss_tail": _interval(mean_ci(tail)),
                "tail_minus_head": _interval(paired_difference_ci(tail, head)),
                "share_fell": round((tail < head).sum() / trained.height, 4),
                "curve_mean": [round(sum(c[i] for c in full) / len(full), 4)
                               for i in range(width)] if full else [],
            }
        arms[arm] = out
    return {"arms": arms}


def markdown(summary: dict[str, Any]) -> str:
    """The summary as a short Markdown table (one row per arm)."""
    lines = ["| arm | items | reply tokens [95% CI] | distiller steps | loss first "
             f"{LOSS_WINDOW} | loss last {LOSS_WINDOW} | last - first [95% CI] | items fell |",
             "|---|---|---|---|---|---|---|---|"]
    for arm, out in summary["arms"].items():
        tok = out["reply_tokens"]
        row = f"| {arm} | {out['items']} | {tok['estimate']:.1f} [{tok['lo']:.1f}, {tok['hi']:.1f}]"
        d = out.get("distiller")
        if d is None:
            lines.append(row + " | - | - | - | - | - |")
            continue
        diff = d["tail_minus_head"]
        lines.append(row + f" | {d['trained_steps_mean']:.1f} | {d['loss_head']['estimate']:.3f}"
                     f" | {d['loss_tail']['estimate']:.3f} | {diff['estimate']:+.3f} "
                     f"[{diff['lo']:+.3f}, {diff['hi']:+.3f}] | {d['share_fell']:.2f} |")
    for arm, out in summary["arms"].items():
        curve = (out.get("distiller") or {}).get("curve_mean")
        if curve:
            lines += ["", f"{arm}: mean loss curve over equal spans of each prompt's steps: "
                      + ", ".join(f"{v:.2f}" for v in curve)]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    """``LOG_DIR --out DIR``: write ``DIR/summary.json`` and ``DIR/summary.md``; print the
    table."""
    parser = argparse.ArgumentParser(prog="harness method esamp-distiller",
                                     description=__doc__.split("::")[0] if __doc__ else None)
    parser.add_argument("log_dir")
    parser.add_argument("--out", help="folder for summary.json and summary.md")
    parser.add_argument("--scorer", default=SCORER)
    parser.add_argument("--factor", default=FACTOR)
    args = parser.parse_args(argv)
    summary = summarise(load(args.log_dir, args.scorer, args.factor))
    summary["log_dir"] = str(args.log_dir)
    text = markdown(summary)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
        (out / "summary.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
