"""Training curves of built ``rl`` products: reward per step, and stability across seeds.

Reads every complete ``rl`` product in the recipe cache through
``harness.results.read_training_log`` (one frame of all logs) and summarises per
(algo, staleness), over seeds, with 95% t-intervals from ``harness.stats``:

* ``reward_first`` / ``reward_last``: mean training reward of the first / last ``window``
  steps (the batch trained on; for staleness ``s`` it was made ``s`` steps earlier);
* ``gain``: ``reward_last - reward_first`` per seed;
* ``kl_last``: mean k3 KL to the starting policy over the last ``window`` steps;
* ``log_ratio_max``: the largest mean |sequence log-ratio| to ``pi_old`` in a step (how far
  stale rollouts were off-policy);
* ``cpu_s`` / ``s_per_step``: training CPU seconds, and CPU seconds per step.

Only products whose options equal the study's defaults apart from ``algo``, ``staleness``
and the seed are taken (``--where opt=value`` narrows further), so a cache holding trial runs
does not mix them in.

The engine's scores of the same products (``--study LOG_DIR``): per variant, pass@1 and
pass@k on the held-out items averaged per seed, then a t-interval over seeds, and each RL
product's seed-paired difference to its own start (``base``).

    python -m methods.rl.curves --out methods/studies/rl_pmd/curves.json \
        --study methods/studies/rl_pmd/logs/main
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["curves", "load_logs", "main", "study_scores", "summarise"]


def load_logs(cache: Path | None = None, where: dict[str, str] | None = None) -> Any:
    """All complete ``rl`` products' logs as one polars frame (``opt_*`` columns as text)."""
    import polars as pl

    from harness.plugins.recipe import recipe_cache, resolve_options
    from harness.results import read_training_log

    defaults = {k: str(v) for k, v in resolve_options("rl").items()
                if k not in ("algo", "staleness")}
    wanted = {**defaults, **(where or {})}
    frames = []
    for folder in sorted((recipe_cache(cache) / "rl").glob("*/product.json")):
        frame = read_training_log(folder.parent)
        if all(frame[f"opt_{k}"][0] == v for k, v in wanted.items()
               if f"opt_{k}" in frame.columns):
            frames.append(frame)
    if not frames:
        raise FileNotFoundError("no complete rl products matching the options in the cache")
    return pl.concat(frames, how="diagonal_relaxed")


def curves(frame: Any) -> list[dict[str, Any]]:
    """Mean reward per step over seeds, per (algo, staleness)."""
    import polars as pl

    out = (frame.group_by(["opt_algo", "opt_staleness", "step"])
           .agg(pl.col("reward").mean().alias("reward"), pl.col("seed").n_unique().alias("seeds"))
           .sort(["opt_algo", "opt_staleness", "step"]))
    return [dict(r) for r in out.iter_rows(named=True)]


def summarise(frame: Any, window: int = 20) -> list[dict[str, Any]]:
    """Per (algo, staleness): the measures of the module docstring, mean and CI over seeds."""
    import polars as pl

    from harness.stats import mean_ci

    per_seed = (frame.sort("step").group_by(["opt_algo", "opt_staleness", "seed"])
                .agg(pl.col("reward").head(window).mean().alias("reward_first"),
                     pl.col("reward").tail(window).mean().alias("reward_last"),
                     pl.col("kl").tail(window).mean().alias("kl_last"),
                     pl.col("log_ratio").max().alias("log_ratio_max"),
                     pl.col("cpu_s").max().alias("cpu_s"),
                     (pl.col("cpu_s").max() / pl.col("step").max()).alias("s_per_step"))
                .with_columns((pl.col("reward_last") - pl.col("reward_first")).alias("gain")))
    rows = []
    for (algo, staleness), group in per_seed.group_by(["opt_algo", "opt_staleness"],
                                                      maintain_order=True):
        group = group.sort("seed")
        row: dict[str, Any] = {"algo": algo, "staleness": int(staleness),
                               "seeds": sorted(group["seed"].to_list())}
        for col in ("reward_first", "reward_last", "gain", "kl_last", "log_ratio_max",
                    "cpu_s", "s_per_step"):
            values = group[col].to_list()
            if len(values) >= 2:
                est = mean_ci(values)
                row[col] = {"mean": est.estimate, "lo": est.lo, "hi": est.hi,
                            "values": values}
            else:
                row[col] = {"mean": values[0], "lo": None, "hi": None, "values": values}
        rows.append(row)
    return sorted(rows, key=lambda r: (r["algo"], r["staleness"]))


def study_scores(log_dir: Path, score: str = "pass_at_k/pass_at_1",
                 reference: str = "base") -> list[dict[str, Any]]:
    """The engine's scores of the products (an ``rl_pmd`` study's logs): per ``variant``, the
    mean over items for each ``seed``, then the mean and 95% t-interval over seeds, and the
    seed-paired difference to ``reference`` (each RL product against its own start)."""
    import polars as pl

    from harness.factorial.report.frame import study_frame
    from harness.stats import mean_ci, paired_difference_ci

    frame = study_frame(log_dir).filter(pl.col("score_key") == score)
    per_seed = (frame.group_by(["variant", "seed"])
                .agg(pl.col("score_value").cast(pl.Float64).mean().alias("mean"),
                     pl.len().alias("items"))
                .sort(["variant", "seed"]))
    by = {v: dict(zip(g["seed"].to_list(), g["mean"].to_list(), strict=True))
          for (v,), g in per_seed.group_by(["variant"], maintain_order=True)}
    rows = []
    for variant, values in sorted(by.items()):
        seeds = sorted(values)
        row: dict[str, Any] = {"variant": variant, "score": score, "seeds": seeds,
                               "per_seed": [values[s] for s in seeds]}
        if len(seeds) >= 2:
            est = mean_ci([values[s] for s in seeds])
            row.update(mean=est.estimate, lo=est.lo, hi=est.hi)
        else:
            row.update(mean=values[seeds[0]], lo=None, hi=None)
        ref = by.get(reference, {})
        common = [s for s in seeds if s in ref]
        if variant != reference and len(common) >= 2:
            diff = paired_difference_ci([values[s] for s in common], [ref[s] for s in common])
            row.update(d_ref=diff.estimate, d_ref_lo=diff.lo, d_ref_hi=diff.hi)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Write the summary and the curves as JSON (and print the summary)."""
    parser = argparse.ArgumentParser(prog="python -m methods.rl.curves")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--window", type=int, default=20)
    parser.add_argument("--where", action="append", default=[], help="opt=value")
    parser.add_argument("--study", type=Path, default=None,
                        help="an rl_pmd study log dir: add the engine's scores over seeds")
    args = parser.parse_args(argv)
    where = dict(w.split("=", 1) for w in args.where)
    frame = load_logs(args.cache, where)
    doc: dict[str, Any] = {"window": args.window, "summary": summarise(frame, args.window),
                           "curves": curves(frame)}
    if args.study is not None:
        doc["scores"] = [*study_scores(args.study), *study_scores(
            args.study, "pass_at_k/pass_at_k")]
        for row in doc["scores"]:
            print(row["score"], row["variant"], round(row["mean"], 4), row.get("lo"),
                  row.get("hi"), row.get("d_ref"), row.get("d_ref_lo"), row.get("d_ref_hi"))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    for row in doc["summary"]:
        print(row["algo"], row["staleness"], row["seeds"],
              {k: round(v["mean"], 4) for k, v in row.items() if isinstance(v, dict)})
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    sys.exit(guarded(main))
