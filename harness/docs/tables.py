"""The README's data tables: benchmarks from ``eval.yaml``, studies from their reports.

Why generated: a hand-written table of 315 lines drifts from the data it restates (an
``eval.yaml`` changes its version, a study is rerun and its verdict moves); these read the
same files the leaderboards and reports do, so the README says what the data says. Long
prose belongs in each folder's README, linked from its row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.evalspec import EVAL_FILE, load_spec
from harness.factorial.protocol_study import ProtocolStudy, load_study_folder
from harness.factorial.report.regenerate import find_reports, study_folders

STUDIES = Path("methods") / "studies"
BENCHMARKS = Path("benchmarks")


def _cell(text: str) -> str:
    """One Markdown table cell: no pipes, no line breaks."""
    return " ".join(str(text).replace("|", "\\|").split())


def _first_sentence(text: str, limit: int = 180) -> str:
    words = " ".join(text.split())
    cut = words.split(". ")[0].rstrip(".")
    return cut if len(cut) <= limit else cut[: limit - 1].rsplit(" ", 1)[0] + "…"


def benchmark_table(root: Path) -> str:
    """One row per benchmark folder with an ``eval.yaml`` (method tasks excluded: their
    studies are in the study table)."""
    rows = ["| benchmark | paper | version | samples | headline | run it | measured |",
            "|---|---|---|---:|---|---|---|"]
    for spec_file in sorted((root / BENCHMARKS).glob(f"*/{EVAL_FILE}")):
        folder = spec_file.parent
        spec = load_spec(folder)
        rel = folder.relative_to(root).as_posix()
        samples = sum(t.samples or 0 for t in spec.tasks)
        first = spec.tasks[0]
        headline = first.metrics[first.headline].summary if first.headline else ""
        paper = f"[{spec.paper}]({spec.paper_url})" if spec.paper else "—"
        example = spec.example
        rows.append("| " + " | ".join(_cell(c) for c in (
            f"[{spec.title}]({rel}/README.md)", paper, spec.version,
            str(samples) if samples else "—", f"`{first.headline}`: {headline}",
            f"`{example.command}`" if example else "—",
            example.measured if example else "—")) + " |")
    return "\n".join(rows) + "\n"


def _verdict_report(folder: Path) -> tuple[Path, dict[str, Any]] | None:
    """The report of a study folder that carries a verdict (the headline's, else the
    sub-report on the claim's score)."""
    for report in find_reports(folder):
        if "logs" in report.relative_to(folder).parts:
            continue
        data = json.loads((report / "report.json").read_text())
        if data.get("verdict"):
            return report, data["verdict"]
    return None


def _ci(contrast: dict[str, Any]) -> str:
    """The contrast with its interval; a contrast over one item has none (its bounds are
    null in report.json), and the table says so rather than failing."""
    lo, hi = contrast["ci"]
    if lo is None or hi is None:
        return (f"{contrast['estimate']:+.3g} (no interval: "
                f"{contrast.get('n_items', '?')} item)")
    return f"{contrast['estimate']:+.3g} [{lo:+.3g}, {hi:+.3g}]"


def study_table(root: Path) -> str:
    """One row per study folder: the paper's claim, our contrast with its CI, the verdict
    class the report computed and why, and links to the study and its report."""
    rows = ["| study | paper: claim | ours: treatment − baseline [95% CI] | verdict | why |",
            "|---|---|---|---|---|"]
    for folder in study_folders(root / STUDIES):
        study = load_study_folder(folder)
        rel = folder.relative_to(root).as_posix()
        link = f"[{study.name}]({rel}/)"
        if isinstance(study, ProtocolStudy):
            rows.append(f"| {link} | protocol study: {_cell(_first_sentence(study.description))}"
                        f" | — | — | runs: {', '.join(study.runs)} |")
            continue
        claim = study.claim
        if claim is None:
            rows.append(f"| {link} | no claim stated | — | — | — |")
            continue
        found = _verdict_report(folder)
        said = _cell(f"{claim.paper + ': ' if claim.paper else ''}"
                     f"{_first_sentence(claim.statement)}")
        if found is None:
            rows.append(f"| {link} | {said} | — | no report carries the verdict "
                        f"(`harness study report` on `{claim.score_key or 'its score'}`) | — |")
            continue
        report, verdict = found
        contrast = verdict.get("contrast") or {}
        ours = (f"{claim.treatment} − {claim.baseline} on `{claim.score_key or ''}`: "
                f"{_ci(contrast)}" if contrast.get("ci") else "—")
        report_link = f"[{verdict['class']}]({report.relative_to(root).as_posix()}/report.md)"
        rows.append("| " + " | ".join((link, said, _cell(ours), f"**{report_link}**",
                                      _cell(verdict.get("why", "")))) + " |")
    return "\n".join(rows) + "\n"


def kinds_table() -> str:
    """One row per plug-in kind, from :data:`harness.plugins.PLUGIN_KINDS`."""
    from harness.plugins import PLUGIN_KINDS

    rows = ["| kind | decorator | module | a registered object is | reached by |",
            "|---|---|---|---|---|"]
    for kind, info in PLUGIN_KINDS.items():
        rows.append(f"| `{kind}` | `{info.decorator}` | `{info.module}` | {_cell(info.interface)} "
                    f"| {_cell(info.reached_by)} |")
    return "\n".join(rows) + "\n"


def readme_sections(root: Path) -> dict[str, str]:
    """Every generated section of the root README, by name."""
    return {"benchmarks": benchmark_table(root), "studies": study_table(root),
            "kinds": kinds_table()}
