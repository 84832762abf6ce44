"""Rendering: figures as data URIs, ``report.md`` and self-contained ``report.html``.

Why no scripts or URLs in the HTML: reports are opened offline and archived as one file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.factorial import plots
from harness.factorial.report.tables import Table

TEMPLATE = Path(__file__).parents[1] / "templates" / "report.html.j2"
"""The Jinja template of ``report.html`` (``harness/factorial/templates``)."""

def variance_share_pairs(analysis: Mapping[str, Any] | None) -> list[tuple[str, float]]:
    """Variance shares as (component, share) pairs from the analysis records."""
    raw = (analysis or {}).get("variance_shares") or []
    pairs: list[tuple[str, float]] = []
    for rec in raw if isinstance(raw, list) else []:
        if isinstance(rec, Mapping) and isinstance(rec.get("share"), int | float):
            pairs.append((str(rec.get("component", rec.get("term"))), float(rec["share"])))
    return pairs


def marginal_points(analysis: Mapping[str, Any] | None) -> dict[str, list[plots.LevelPoint]]:
    """Estimated marginal means of the main-effect terms, per factor, for the plot."""
    out: dict[str, list[plots.LevelPoint]] = {}
    raw = (analysis or {}).get("marginal_means") or []
    for rec in raw if isinstance(raw, list) else []:
        if not isinstance(rec, Mapping) or ":" in str(rec.get("term", ":")):
            continue
        if isinstance(rec.get("estimate"), int | float):
            out.setdefault(str(rec["term"]), []).append(plots.LevelPoint(
                str(rec.get("level")), float(rec["estimate"]), rec.get("lo"), rec.get("hi")))
    return out


def main_points(data: Mapping[str, Any]) -> dict[str, list[plots.LevelPoint]]:
    return {
        factor: [plots.LevelPoint(r["level"], r["mean"], r["ci_lower"], r["ci_upper"])
                 for r in rows if r["mean"] is not None]
        for factor, rows in data["effects"]["main_effects"].items()
    }


def report_plots(data: Mapping[str, Any]) -> list[dict[str, str]]:
    """The report's figures as ``{"key", "title", "src"}`` with ``src`` a data URI."""
    response = data["response"]["score_key"] or data["response"]["column"]
    figures = [{
        "key": "main_effects", "title": "Main effects (raw level means, 95% CI)",
        "src": plots.level_means_plot(main_points(data), ylabel=response,
                                      title="Main effects"),
    }]
    for pair in data["effects"]["interactions"]:
        a, b = pair["factors"]
        figures.append({
            "key": f"interaction:{a}:{b}", "title": f"Interaction {a} \u00d7 {b}",
            "src": plots.interaction_plot(a, b, pair["x_levels"], pair["traces"],
                                          ylabel=response),
        })
    shares = variance_share_pairs(data.get("analysis"))
    if shares:
        figures.append({"key": "variance_shares", "title": "Variance shares",
                        "src": plots.variance_shares_plot(shares, title="Variance shares")})
    marginal = marginal_points(data.get("analysis"))
    if marginal:
        figures.append({"key": "marginal_means", "title": "Estimated marginal means (95% CI)",
                        "src": plots.level_means_plot(marginal, ylabel=response,
                                                      title="Estimated marginal means")})
    return figures


def verdict_lines(verdict: Mapping[str, Any] | None) -> list[str]:
    """The claim's verdict as Markdown lines (none when the study states no claim)."""
    if not verdict:
        return []
    claim = verdict["claim"]
    lines = ["## Verdict on the claim", "",
             f"Claim{' (' + claim['paper'] + ')' if claim.get('paper') else ''}: "
             f"{claim['statement']}", "",
             f"**{verdict['class']}**: {verdict['why']}.", ""]
    arms = verdict.get("arms")
    if arms:
        lines += ["| arm | level | mean | 95% CI | n | at a bound |", "|---|---|---|---|---|---|"]
        for end, arm in arms.items():
            lines.append(f"| {end} | {arm['level']} | {arm['mean']:.4g} | "
                         f"[{arm['ci'][0]:.4g}, {arm['ci'][1]:.4g}] | {arm['n']} | "
                         f"{arm['at'] or 'no'} |")
        mdd = verdict.get("mdd")
        lines += ["", f"Contrast treatment - baseline over {verdict['contrast']['n_items']} "
                      f"paired items; minimum detectable difference (80% power, alpha 0.05) "
                      + (f"{mdd:.4g}" if mdd is not None else "not estimable (no variance)")
                      + (f" against a claimed {claim['size']:g}" if claim.get("size") else "")
                      + ".", ""]
    return lines


def render_markdown(data: Mapping[str, Any], tables: list[Table]) -> str:
    """``report.md``: the same content as the JSON, as headings, sentences and tables."""
    prov = data["provenance"]
    resp = data["response"]
    lines = [
        f"# {data['title']}", "",
        f"Generated {data['generated_at']} (report schema {data['schema_version']}). "
        f"Response: `{resp['column']}`"
        + (f" of score `{resp['score_key']}`" if resp["score_key"] else "")
        + f"; factors: {', '.join(resp['factors'])}; item: `{resp['item']}`; "
        f"interactions up to order {resp['order']}.", "",
        "## Attribution", "", data["attribution"]["statement"], "",
    ]
    lines += verdict_lines(data.get("verdict"))
    if data.get("notes"):
        lines += ["## How the numbers were computed", ""]
        lines += [f"- {note}" for note in data["notes"]] + [""]
    if data.get("analysis_error"):
        lines += [f"**Analysis not available:** {data['analysis_error']}", ""]
    if data.get("identification"):
        lines += ["## What the design identifies", "", "| factor | status | why |",
                  "|---|---|---|"]
        lines += [f"| {r['factor']} | {r['status']} | {r['reason']} |"
                  for r in data["identification"]]
        lines += [""]
    lines += ["## Tables", ""]
    for table in tables:
        lines += [table.markdown(), ""]
    lines += ["## Commands", "", "Report:", "", "```sh", prov["report_command"], "```", "",
              "Evaluations (" + ("recorded" if all(c["recorded"] for c in prov["eval_commands"])
                                 else "reconstructed from the logs' eval specs") + "):", "",
              "```sh", *[c["command"] for c in prov["eval_commands"]], "```", ""]
    return "\n".join(lines)


def render_html(data: Mapping[str, Any], tables: list[Table],
                figures: list[dict[str, str]]) -> str:
    """``report.html``: self-contained (inline CSS, base64 plots, no scripts or URLs)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE.parent),
        autoescape=jinja2.select_autoescape(["html", "j2"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template(TEMPLATE.name).render(data=data, tables=tables, figures=figures)


