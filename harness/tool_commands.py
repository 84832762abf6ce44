"""The offline steps of benchmarks and papers as ``harness`` subcommands: one table, data.

Why: users were sent to ``python -m environments.worldtravel.stats``, ``python -m
benchmarks.medversa.protocol``, ``python -m leaderboards.runs`` and a dozen more, each with
its own module path to remember. Every such step is now ``harness <group> <command>``
(``harness worldtravel stats``, ``harness medversa lifelong``, ``harness leaderboard run``),
a thin wrapper that hands the rest of the command line to the same ``main(argv)`` the
module always had, so both spellings run the same code and take the same arguments
(``--help`` included); the ``python -m`` entry points stay as internal tooling.

Targets are ``"module:function"`` strings imported only when the command runs: ``harness
--help`` stays fast, and the harness package itself imports no benchmark or method (the
CLI is the shell that may reach them).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import typer

__all__ = ["TOOLS", "Tool", "register_tools", "resolve", "run_tool"]


@dataclass(frozen=True)
class Tool:
    """One subcommand: ``harness <group> <name>`` runs ``target`` with the remaining args."""

    group: str
    name: str
    target: str
    help: str
    prefix: tuple[str, ...] = ()
    """Arguments put before the user's (a sub-command of the module's own parser)."""


TOOLS: tuple[Tool, ...] = (
    Tool("leaderboard", "run", "leaderboards.runs.__main__:main",
         "Run (or --build) a board's evaluations from its run file, resumably."),
    Tool("worldtravel", "generate", "environments.worldtravel.generate:main",
         "Generate WorldTravel scenarios (seeded)."),
    Tool("worldtravel", "check", "environments.worldtravel.check:main",
         "Check a plan against a WorldTravel scenario."),
    Tool("worldtravel", "stats", "environments.worldtravel.stats:main",
         "Statistics of the scenario set (constraints, coupling, reference planners)."),
    Tool("worldtravel", "report", "benchmarks.worldtravel.report:main",
         "Per-constraint report of WorldTravel logs."),
    Tool("worldtravel", "site", "environments.worldtravel.site.__main__:main",
         "Build the Webscape site of a scenario set."),
    Tool("worldtravel", "site-measure", "environments.worldtravel.site.measure:main",
         "Measure the Webscape site (pages, legibility, perception)."),
    Tool("causalgame", "validate", "environments.causalgame.validate:main",
         "Validate CausalGame scenarios against the published protocol."),
    Tool("causalgame", "compare", "environments.causalgame.compare:main",
         "Compare CausalGame logs with the published numbers."),
    Tool("causalgame", "judges", "benchmarks.causalgame.judges:main",
         "Run the three-judge rubric over CausalGame logs."),
    Tool("causalgame", "rescore", "benchmarks.causalgame.rescore:main",
         "Rescore CausalGame logs under the published protocol (auto-submitted -> N/A)."),
    Tool("causalgame", "swing", "benchmarks.causalgame.swing:main",
         "The setup swing of a study's logs: max - min over setups per model, with CIs."),
    Tool("medversa", "load", "environments.medversa.load:main",
         "Validate a MedVersa-format data file (records, subjects, errors)."),
    Tool("medversa", "lifelong", "benchmarks.medversa.lifelong:main",
         "Lifelong editing curves (N edits, checkpointed, resumable)."),
    Tool("medversa", "full", "benchmarks.medversa.full:main",
         "The full MedVersa protocol over a split."),
    Tool("medversa", "medrek-budget", "benchmarks.medversa.medrek_budget:main",
         "MedREK's training-budget sweep."),
    Tool("formulacode", "validate", "benchmarks.formulacode.validate:main",
         "Acceptance runs of the FormulaCode task pack (base, expert, oracle)."),
    Tool("formulacode", "calibration", "benchmarks.formulacode.calibration:main",
         "Each task's cycles speedup beside the quiet-host clock speedup (>10% flagged)."),
    Tool("open-problems", "verify", "environments.open_problems.verify:main",
         "Verify a candidate solution of an open-problems task."),
    Tool("method lightwm", "induce-llm", "methods.lightwm.__main__:main",
         "LightWM's schema induction by a model reading the traces (the paper's).",
         prefix=("induce-llm",)),
    Tool("method", "mvr-segmenter", "methods.mvrcache.mvr_segmenter:main",
         "Train or inspect MVR-cache's learned segmenter."),
    Tool("method", "mvrcache-summary", "methods.mvrcache.mvrcache_summary:main",
         "MVR-cache study summary reports."),
    Tool("method", "scd-predictor", "methods.scd.scd_predictor:main",
         "Train SCD's learned patch predictor."),
    Tool("method", "bbo", "methods.bbo_merge.bbo:main",
         "Black-box optimisers (ES, CBO, OVI hybrids) on their benchmark functions."),
    Tool("method", "cpt-rewind", "methods.cpt_rewind.cpt_rewind:main",
         "Continued pre-training with rewinding."),
    Tool("method", "udm-curves", "methods.udm.curves:main", "UDM-GRPO training curves."),
    Tool("method", "procedural-needle-pilot", "methods.procedural_pretraining.needle_finetune:main",
         "Procedural pretraining: needle fine-tune recall curves (the budget pilot)."),
    Tool("method", "rl-curves", "methods.rl.curves:main", "RL training curves from logs."),
    Tool("method", "scout-seeds", "methods.scout.seeds:main", "SCOUT seed-replicate summary."),
    Tool("method", "scout-compare", "methods.scout.compare:main", "SCOUT comparison table."),
    Tool("method", "scout-cost", "methods.scout.cost:main", "SCOUT cost accounting."),
    Tool("method", "scout-rl", "methods.scout.multiturn_rl:main",
         "SCOUT multi-turn RL stage."),
    Tool("method", "tasks", "harness.method_tasks:main",
         "The paired table of method-task logs (--by, --keys, --growth, --study)."),
    Tool("method", "ttrl", "methods.thetaevolve.ttrl_transfer:main",
         "TTRL's steps (transfer, ...)."),
    Tool("method", "bbo-merge", "methods.bbo_merge.bbo_merge:main",
         "Summarise a BBO model-merging study's logs."),
    Tool("method", "kv-curves", "methods.kv.curves:main",
         "KV methods' size and time curves from a study's logs."),
    Tool("method", "thetaevolve-replies", "methods.thetaevolve.replies:main",
         "ThetaEvolve studies' reply cap and the replies that hit it, per cell, from the logs."),
    Tool("method", "esamp-distiller", "methods.esamp.distiller:main",
         "ESamp's distiller loss curves (first vs last steps per prompt) from a study's logs."),
    Tool("leaderboard", "readme-tables", "leaderboards.runs.readme_tables:main",
         "The README's benchmark tables from a board's leaderboard.json (--write)."),
)
"""Every offline step a README tells a user to run, by group (a benchmark, a paper's
methods, the board)."""


def resolve(target: str) -> Callable[..., Any]:
    """The function a ``"module:function"`` target names."""
    module_name, _, function = target.partition(":")
    return getattr(importlib.import_module(module_name), function)  # type: ignore[no-any-return]


def run_tool(tool: Tool, args: list[str]) -> int:
    """Call the tool's ``main`` with ``args`` (as its ``python -m`` entry point would be
    called, ``sys.argv[0]`` naming the harness command); returns its exit code."""
    main = resolve(tool.target)
    previous = sys.argv
    args = [*tool.prefix, *args]
    sys.argv = [f"harness {tool.group} {tool.name}", *args]
    try:
        takes_argv = bool(inspect.signature(main).parameters)
        result = main(args) if takes_argv else main()
    except SystemExit as stop:  # argparse's --help and usage errors
        code = stop.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv = previous
    return result if isinstance(result, int) else 0


def register_tools(groups: dict[str, Any], make_group: Callable[[str], Any]) -> None:
    """Add one command per :data:`TOOLS` entry to its group's Typer app (``groups`` maps
    a group's words, ``"method lightwm"``, to its app; ``make_group(name)`` makes a
    top-level group the CLI does not have yet)."""

    def command_for(tool: Tool) -> Callable[[typer.Context], None]:
        def command(ctx: typer.Context) -> None:
            raise typer.Exit(run_tool(tool, list(ctx.args)))

        return command

    for tool in TOOLS:
        if tool.group not in groups:
            groups[tool.group] = make_group(tool.group)
        groups[tool.group].command(
            tool.name, help=f"{tool.help} (--help lists its arguments)",
            context_settings={"allow_extra_args": True, "ignore_unknown_options": True,
                              "help_option_names": []},
            add_help_option=False,
        )(command_for(tool))
