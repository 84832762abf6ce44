"""The ``harness`` command: list, doctor, sandbox, demo, study, leaderboard.

Each command imports what it needs when it runs, so ``harness --help`` stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Evaluation suite: benchmarks, sandboxes, factorial studies.")
sandbox_app = typer.Typer(no_args_is_help=True, help="Sandbox images and checks.")
app.add_typer(sandbox_app, name="sandbox")
console = Console()


@app.command("list")
def list_cmd(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List benchmarks, methods, model providers and sandboxes."""
    from harness.inventory import inventory

    inv = inventory()
    if as_json:
        typer.echo(json.dumps(inv, indent=2))
        return
    for section, rows in inv.items():
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
        table.add_row(c.name, "[green]yes[/]" if c.ok else "[red]no[/]", c.detail,
                      "" if c.ok else c.fix)
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
    n: Annotated[int, typer.Option(help="Samples per run.")] = 10,
) -> None:
    """Run the short demo: a benchmark with the embedded model and reference agents, then a
    leaderboard and a factorial report from those logs."""
    from harness.demo import run_demo

    run_demo(out=out, n=n, console=console)


def main() -> None:  # pragma: no cover - console script shim
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
