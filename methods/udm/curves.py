"""Training curves of finished UDM runs: reward per step, and stability across seeds.

Reads every ``result.json`` in the run cache (:mod:`methods.udm.train`; the study's cells
leave them there), keeps the runs whose options equal the defaults apart from ``algo``
(``--where option=value`` changes the filter), and writes per algorithm:

* ``reward`` / ``kl_ref``: the per-step mean over seeds of the rollout reward and the probe
  KL to the pretrained model, and the per-seed curves;
* per seed, :func:`methods.udm.train.stability` of its curve (oscillation: std of the
  step-to-step reward change; collapse: drop of the 20-step moving average from its peak to
  the end; first/last 20-step means) and its CPU seconds;
* over seeds, 95% t-intervals (``harness.stats.mean_ci``) of those, the across-seed
  variance of the last-20-step reward, and the seed-paired ``udm - naive`` differences.

    python -m methods.udm.curves --out methods/studies/udm_grpo/curves.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["load_runs", "main", "summarise"]

STABILITY_KEYS = ("reward_first", "reward_last", "reward_peak", "oscillation", "collapse")


def load_runs(cache: Path, where: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Finished runs in ``cache/runs`` whose options match the defaults (but ``algo``) and
    ``where`` (values compared as text), sorted by (algo, seed)."""
    from methods.udm.train import RESULT_FILE, UDMConfig

    wanted = {k: str(v) for k, v in asdict(UDMConfig()).items() if k not in ("algo", "threads")}
    wanted.update({k: str(v) for k, v in (where or {}).items()})
    runs = []
    for path in sorted((cache / "runs").glob(f"*/{RESULT_FILE}")):
        out = json.loads(path.read_text(encoding="utf-8"))
        opts = {k: str(v) for k, v in out["options"].items()}
        if all(opts.get(k) == v for k, v in wanted.items()):
            runs.append(out)
    return sorted(runs, key=lambda r: (r["algo"], r["seed"]))


def _ci(values: Sequence[float]) -> dict[str, float] | None:
    from harness.stats import mean_ci

    if len(values) < 2:
        return {"mean": float(values[0]), "n": 1} if values else None
    est = mean_ci(list(values))
    return {"mean": est.estimate, "lo": est.lo, "hi": est.hi, "n": est.n}


def _mean_curve(curves: Sequence[Sequence[float]]) -> list[float]:
    n = min(len(c) for c in curves)
    return [sum(c[i] for c in curves) / len(curves) for i in range(n)]


def summarise(runs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The curves JSON (see the module docstring) of ``runs``."""
    from methods.udm.train import stability

    out: dict[str, Any] = {"algos": {}, "paired_udm_minus_naive": {}}
    per_seed: dict[str, dict[int, dict[str, float]]] = {}
    for algo in sorted({r["algo"] for r in runs}):
        mine = [r for r in runs if r["algo"] == algo]
        rewards = [[row["reward"] for row in r["curve"]] for r in mine]
        kls = [[row["kl_ref"] for row in r["curve"] if "kl_ref" in row] for r in mine]
        kl_steps = [int(row["step"]) for row in mine[0]["curve"] if "kl_ref" in row]
        seeds = {int(r["seed"]): {**stability(r["curve"]),
                                  "kl_ref_last": (kl[-1] if kl else 0.0),
                                  "train_cpu_s": float(r["train_cpu_s"]),
                                  "pretrain_cpu_s": float(r["pretrain_cpu_s"])}
                 for r, kl in zip(mine, kls, strict=True)}
        per_seed[algo] = seeds
        last = [s["reward_last"] for s in seeds.values()]
        mean_last = sum(last) / len(last)
        out["algos"][algo] = {
            "seeds": sorted(seeds),
            "reward_mean_per_step": _mean_curve(rewards),
            "reward_per_seed": {str(int(r["seed"])): c for r, c in zip(mine, rewards,
                                                                        strict=True)},
            "kl_ref_steps": kl_steps,
            "kl_ref_mean": _mean_curve(kls) if all(kls) else [],
            "per_seed": {str(k): v for k, v in seeds.items()},
            "over_seeds": {k: _ci([s[k] for s in seeds.values()])
                           for k in (*STABILITY_KEYS, "kl_ref_last", "train_cpu_s")},
            "reward_last_variance_across_seeds": (
                sum((x - mean_last) ** 2 for x in last) / (len(last) - 1)
                if len(last) > 1 else 0.0),
        }
    if {"udm", "naive"} <= set(per_seed):
        common = sorted(set(per_seed["udm"]) & set(per_seed["naive"]))
        for key in (*STABILITY_KEYS, "kl_ref_last"):
            diffs = [per_seed["udm"][s][key] - per_seed["naive"][s][key] for s in common]
            out["paired_udm_minus_naive"][key] = _ci(diffs)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m methods.udm.curves --out FILE [--cache DIR] [--where k=v ...]``."""
    from methods.udm.train import cache_dir

    parser = argparse.ArgumentParser(prog="python -m methods.udm.curves")
    parser.add_argument("--out", required=True)
    parser.add_argument("--cache", default=None, help="default $EVALSUITE_CACHE/udm")
    parser.add_argument("--where", nargs="*", default=[], metavar="OPTION=VALUE")
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    where = {}
    for item in args.where:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--where takes option=value, got {item!r}")
        where[key] = value
    cache = Path(args.cache) if args.cache else cache_dir({})
    runs = load_runs(cache, where)
    if not runs:
        print(f"no finished UDM runs matching the options in {cache}", file=sys.stderr)
        return 1
    Path(args.out).write_text(json.dumps(summarise(runs), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {len(runs)} runs")
    return 0


if __name__ == "__main__":
    from harness.errors import guarded

    raise SystemExit(guarded(main))
