"""Provenance: the eval commands (recorded or rebuilt from eval specs) and package versions.

Why: a report must say how to reproduce every number in it.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import platform
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

#: Distributions whose versions every report records.
VERSIONED = ("inspect_ai", "evalsuite", "polars", "statsmodels", "numpy", "matplotlib")


@functools.cache
def suite_distribution() -> str:
    """The installed distribution that ships the ``harness`` package (the suite itself)."""
    names = importlib.metadata.packages_distributions().get("harness") or ["evalsuite"]
    return names[0]


def version(dist: str) -> str | None:
    if dist == "evalsuite":
        dist = suite_distribution()
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def cli_value(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value)


def eval_command(row: Mapping[str, Any], epochs: int) -> str:
    """An ``inspect eval`` command line equivalent to the recorded eval spec."""
    words = ["inspect", "eval", str(row["task"])]
    if row.get("model"):
        words += ["--model", str(row["model"])]
    for flag, column in (("-T", "task_args"), ("-M", "model_args")):
        for key, value in json.loads(row.get(column) or "{}").items():
            if value is not None:
                words += [flag, f"{key}={cli_value(value)}"]
    for key, value in json.loads(row.get("generate_config") or "{}").items():
        words += [f"--{key.replace('_', '-')}", cli_value(value)]
    if epochs > 1:
        words += ["--epochs", str(epochs)]
    return shlex.join(words)


def provenance(scored: pl.DataFrame, command: str) -> dict[str, Any]:
    """Commands (recorded or reconstructed) and versions behind the logs and the report."""
    mode = "log_model" if "log_model" in scored.columns else "model"
    keys = ["task", "task_args", mode, "model_args", "generate_config", "eval_metadata"]
    evals = (
        scored.group_by(keys)
        .agg(pl.col("epoch").max().alias("epochs"),
             pl.col("cell_id").drop_nulls().unique().sort().alias("cell_ids"),
             pl.col("log_file").unique().sort().alias("log_files"),
             pl.col("task_version").drop_nulls().first().alias("task_version"))
        .rename({mode: "model"})
        # eval_metadata last: cells that differ only in it (a solver factor) would otherwise
        # tie, and group_by's order is arbitrary, so the report would not be reproducible
        .sort(["task", "model", "task_args", "model_args", "generate_config", "eval_metadata"],
              nulls_last=True)
    )
    commands = []
    for row in evals.iter_rows(named=True):
        meta = json.loads(row["eval_metadata"] or "{}")
        recorded = meta.get("command") if isinstance(meta.get("command"), str) else None
        line = recorded or eval_command(row, int(row["epochs"] or 1))
        commands.append({
            "command": line,
            "recorded": recorded is not None,
            "task": row["task"],
            "task_version": row["task_version"],
            "task_args": json.loads(row["task_args"] or "{}"),
            "model": row["model"],
            "model_args": json.loads(row["model_args"] or "{}"),
            "generate_config": json.loads(row["generate_config"] or "{}"),
            "epochs": int(row["epochs"] or 1),
            "cell_ids": row["cell_ids"],
            "log_files": [Path(p).name for p in row["log_files"]],
        })
    created = scored.get_column("created").drop_nulls()
    log_packages: dict[str, list[str]] = {}
    if "packages" in scored.columns:  # recorded by harness.results when available
        for text in scored.get_column("packages").drop_nulls().unique().to_list():
            for name, ver in json.loads(text).items():
                log_packages.setdefault(name, [])
                if ver not in log_packages[name]:
                    log_packages[name].append(ver)
    return {
        "report_command": command,
        "eval_commands": commands,
        "versions": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            **{dist: version(dist) for dist in VERSIONED},
        },
        "logs": {
            "n_logs": scored.get_column("log_file").n_unique(),
            "first_created": created.min() if len(created) else None,
            "last_created": created.max() if len(created) else None,
            "packages": log_packages or None,
        },
    }

