"""The report's tables, shared by the Markdown and HTML views (so they cannot disagree).

Why one list: ``report_tables`` turns the report dict into :class:`Table` objects once;
each view only lays them out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.factorial.report.attribution import anova_rows


def fmt(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.2e}"
        return f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


@dataclass
class Table:
    """One table of the report, shared by the Markdown and HTML views."""

    key: str
    title: str
    headers: list[str]
    rows: list[list[Any]]
    note: str = ""

    def cells(self) -> list[list[str]]:
        """The rows formatted for display."""
        return [[fmt(v) for v in row] for row in self.rows]

    def display(self) -> list[list[tuple[str, bool]]]:
        """Formatted rows with a "numeric" flag per cell (right-aligned in HTML)."""
        return [[(fmt(v), isinstance(v, int | float) and not isinstance(v, bool)) for v in row]
                for row in self.rows]

    def markdown(self) -> str:
        """A GitHub-flavoured Markdown table under a level-3 heading."""
        def esc(text: str) -> str:
            return text.replace("|", "\\|").replace("\n", " ")

        lines = [f"### {self.title}", ""]
        if self.note:
            lines += [self.note, ""]
        lines.append("| " + " | ".join(esc(h) for h in self.headers) + " |")
        lines.append("|" + "|".join("---" for _ in self.headers) + "|")
        lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in self.cells()]
        return "\n".join(lines)


def records_table(key: str, title: str, records: list[Mapping[str, Any]]) -> Table:
    headers: dict[str, None] = {}
    for record in records:
        headers.update(dict.fromkeys(record))
    cols = list(headers)
    return Table(key, title, cols, [[r.get(c) for c in cols] for r in records])


def generic_tables(key: str, title: str, value: Any) -> list[Table]:
    """Tables for an analysis section of unknown shape (records, mappings, scalars)."""
    if value is None or value == {} or value == []:
        return []
    if isinstance(value, list):
        if all(isinstance(v, Mapping) for v in value):
            return [records_table(key, title, value)]
        return [Table(key, title, ["value"], [[v] for v in value])]
    if isinstance(value, Mapping):
        scalars = {k: v for k, v in value.items()
                   if not isinstance(v, Mapping | list) or
                   (isinstance(v, list) and not any(isinstance(x, Mapping | list) for x in v))}
        tables = []
        if scalars:
            tables.append(Table(key, title, ["field", "value"],
                                [[k, v] for k, v in scalars.items()]))
        for k, v in value.items():
            if k not in scalars:
                tables += generic_tables(f"{key}.{k}", f"{title}: {k}", v)
        return tables
    return [Table(key, title, ["value"], [[value]])]


def robustness_tables(robustness: Any) -> list[Table]:
    """Spread/CPS per model and setup factor, plus rank agreement and rank flips."""
    setups = robustness.get("setup_factors") if isinstance(robustness, Mapping) else None
    if not isinstance(setups, Mapping) or not setups:
        return generic_tables("robustness", "Robustness", robustness)
    model = robustness.get("model_factor", "model")
    per_model, agreement = [], []
    for setup, entry in setups.items():
        for level, stats in (entry.get("per_model") or {}).items():
            per_model.append([setup, level, stats.get("spread"), stats.get("max"),
                              stats.get("avg"), stats.get("cps")])
        flips = ["{} vs {}: {} ahead at {}; {} ahead at {}".format(
            *f["models"][:2], f["models"][0], ", ".join(f["first_ahead_at"]),
            f["models"][1], ", ".join(f["second_ahead_at"]))
            for f in entry.get("rank_flips") or []]
        taus = ["{}~{}: {}".format(t["a"], t["b"], fmt(t["tau"]))
                for t in entry.get("kendall_tau") or []]
        agreement.append([setup, entry.get("kendall_w"), "; ".join(taus) or None,
                          entry.get("n_rank_flips"), "; ".join(flips) or None])
    return [
        Table("robustness.per_model", f"Robustness of {model} across setup factors",
              ["setup factor", model, "spread", "max", "avg", "CPS"], per_model,
              note="spread = max - min over the setup factor's levels; "
                   "CPS = (1 - (max - avg)) * max."),
        Table("robustness.rank_agreement", "Rank agreement",
              ["setup factor", "Kendall W", "Kendall tau", "rank flips", "flipped pairs"],
              agreement),
    ]


def attribution_table(attribution: Mapping[str, Any]) -> list[Table]:
    provided = attribution.get("analysis_attribution")
    setups = provided.get("setup_factors") if isinstance(provided, Mapping) else None
    rows = []
    for setup, entry in (setups or {}).items():
        if isinstance(entry, Mapping):
            rows.append([setup, entry.get("mean"), entry.get("min"), entry.get("max"),
                         f"{entry.get('levels_same_sign')} of {entry.get('n_levels')}",
                         entry.get("interaction_share"), entry.get("interaction_ss_share")])
    if rows and isinstance(provided, Mapping):
        a, b = (provided.get("models") or ["?", "?"])[:2]
        return [Table("attribution", f"Attribution of the gap {a} - {b}",
                      ["setup factor", "mean gap", "min", "max", "same sign",
                       "interaction share", "interaction SS share"], rows,
                      note="interaction share: part of the gap's squared variation over "
                           "setup levels that is model x setup interaction.")]
    headline = attribution.get("headline")
    if headline:
        return [Table("attribution", "Headline difference", ["field", "value"],
                      [[k, v] for k, v in headline.items()])]
    return []


def report_tables(data: Mapping[str, Any]) -> list[Table]:
    """Every table of the report, in reading order (the Markdown and HTML share them)."""
    factors: list[str] = data["response"]["factors"]
    design = data["design"]
    policy = (data.get("data") or {}).get("errored_policy")
    errors = (data.get("data") or {}).get("n_errors", 0)
    counted = {"zero": "scored 0 and kept in every mean",
               "drop": "counted here and left out of the means"}.get(policy or "", "")
    errored_note = (f" Errored samples: {errors}, {policy}: {counted}." if policy
                    else f" Errored samples: {errors}.")
    tables = [
        Table("design", "Design", ["cell", *factors, "n items", "epochs", "samples", "scored",
                                   "errors", "logs", "status"],
              [[c["cell"], *[c["levels"][f] for f in factors], c["n_items"], c["n_epochs"],
                c["n_samples"], c["n_scored"], c["errors"], c["n_logs"], c["status"]]
               for c in design["cells"]],
              note=f"{design['n_cells']} of {design['n_possible_cells']} possible cells run."),
        Table("cell_results", "Cell results",
              [*factors, "mean", "CI lower", "CI upper", "n", "items", "errors"],
              [[*[c["levels"][f] for f in factors], c["mean"], c["ci_lower"], c["ci_upper"],
                c["n"], c["n_items"], c["errors"]] for c in data["cell_results"]],
              note="95% CIs clustered by item." + errored_note),
    ]
    analysis = data.get("analysis") or {}
    anova = anova_rows(analysis)
    if anova:
        cols = ["term", "sum_sq", "df", "F", "p", "partial_eta2", "omega2"]
        tables.append(Table("anova", "ANOVA", cols, [[r.get(c) for c in cols] for r in anova]))
    tables += generic_tables("variance_shares", "Variance shares",
                              analysis.get("variance_shares"))
    tables += generic_tables("marginal_means", "Estimated marginal means",
                              analysis.get("marginal_means"))
    tables += generic_tables("pairwise", "Pairwise comparisons (Holm-adjusted)",
                              analysis.get("pairwise"))
    tables += robustness_tables(analysis.get("robustness"))
    tables += attribution_table(data["attribution"])
    tables += generic_tables("power", "Power", analysis.get("power"))
    tables += generic_tables("effects", "Model coefficients", analysis.get("effects"))
    tables += generic_tables("model", "Model", analysis.get("model"))
    versions = data["provenance"]["versions"]
    tables.append(Table("versions", "Versions", ["component", "version"],
                        [[k, v] for k, v in versions.items()]))
    return tables


