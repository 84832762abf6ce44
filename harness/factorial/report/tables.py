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


def _ci(pair: Any) -> str | None:
    if not isinstance(pair, list | tuple) or len(pair) != 2 or None in pair:
        return None
    return f"[{fmt(pair[0])}, {fmt(pair[1])}]"


def robustness_tables(robustness: Any) -> list[Table]:
    """Spread/CPS per model and setup factor with bootstrap CIs, rank agreement, rank flips
    (all, and only those whose both differences are distinguishable from noise)."""
    setups = robustness.get("setup_factors") if isinstance(robustness, Mapping) else None
    if not isinstance(setups, Mapping) or not setups:
        return generic_tables("robustness", "Robustness", robustness)
    model = robustness.get("model_factor", "model")
    level = robustness.get("level", 0.95)
    per_model, agreement, flips_rows = [], [], []
    for setup, entry in setups.items():
        for lv, st in (entry.get("per_model") or {}).items():
            per_model.append([setup, lv, st.get("spread"), _ci(st.get("spread_ci")),
                              st.get("spread_bias_corrected"), st.get("max"), st.get("avg"),
                              st.get("cps"), _ci(st.get("cps_ci"))])
        taus = ["{}~{}: {} {}".format(t["a"], t["b"], fmt(t["tau"]), _ci(t.get("tau_ci")) or "")
                .strip() for t in entry.get("kendall_tau") or []]
        agreement.append([setup, entry.get("kendall_w"), _ci(entry.get("kendall_w_ci")),
                          "; ".join(taus) or None, entry.get("n_rank_flips"),
                          entry.get("n_rank_flips_distinguishable")])
        for f in entry.get("rank_flips") or []:
            a, b = f["models"][:2]
            flips_rows.append([setup, f"{a} vs {b}", ", ".join(f["first_ahead_at"]),
                               ", ".join(f["second_ahead_at"]), f.get("distinguishable")])
    tables = [
        Table("robustness.per_model", f"Robustness of {model} across setup factors",
              ["setup factor", model, "spread", "spread CI", "spread (bias-corrected)", "max",
               "avg", "CPS", "CPS CI"], per_model,
              note="spread = max - min over the setup factor's levels (biased upward by "
                   "noise: see the bias-corrected value); CPS = (1 - (max - avg)) * max. "
                   f"CIs: {fmt(level)} percentile bootstrap, items resampled (paired)."),
        Table("robustness.rank_agreement", "Rank agreement",
              ["setup factor", "Kendall W", "W CI", "Kendall tau (CI)", "rank flips",
               "distinguishable flips"], agreement,
              note="A flip is distinguishable when both opposite differences have paired-by-"
                   f"item {fmt(level)} CIs that exclude 0."),
    ]
    if flips_rows:
        tables.append(Table("robustness.rank_flips", "Rank flips",
                            ["setup factor", "pair", "first ahead at", "second ahead at",
                             "distinguishable"], flips_rows))
    return tables


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


def _binary(data: Mapping[str, Any]) -> bool:
    return any("Scores are 0/1" in n for n in data.get("notes") or [])


def _counting_note(data: Mapping[str, Any]) -> str:
    """How the logs were counted (copies and superseded attempts set aside), if known."""
    counting = (data.get("data") or {}).get("counting")
    return f" Logs: {counting['line']}." if counting else ""


def cost_tables(cost: Mapping[str, Any] | None, factors: list[str]) -> list[Table]:
    """The cost section (``--cost`` / ``--pricing``) as one table, when the report has it."""
    if not cost:
        return []
    cols = ["n", "tokens_per_sample", "working_s_per_sample", "dollars_per_sample",
            "mean_score", "score_per_dollar", "dollars_per_point", "tokens_per_point"]
    priced = ", ".join(f"{m}: ${p['input']:g}/${p['output']:g} per Mtok in/out"
                       for m, p in (cost.get("prices") or {}).items())
    note = ("Per sample means over samples x epochs (working seconds exclude waiting for a "
            "model connection). " + (f"Prices from {cost['pricing_file']} ({priced}). "
                                     if cost.get("pricing_file") else "No pricing file: "
                                     "dollars are left empty. ")
            + (f"Unpriced (no dollars): {', '.join(cost['unpriced_models'])}."
               if cost.get("unpriced_models") else ""))
    return [Table("cost", "Cost per sample and per point", [*factors, *cols],
                  [[*[c["levels"][f] for f in factors], *[c.get(k) for k in cols]]
                   for c in cost.get("cells") or []], note=note.strip())]


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
              note=f"{design['n_cells']} of {design['n_possible_cells']} possible cells run."
              + _counting_note(data)),
        Table("cell_results", "Cell results",
              [*factors, "mean", "CI lower", "CI upper", "n", "items", "errors"],
              [[*[c["levels"][f] for f in factors], c["mean"], c["ci_lower"], c["ci_upper"],
                c["n"], c["n_items"], c["errors"]] for c in data["cell_results"]],
              note=("95% CIs clustered by item: Wilson intervals on the effective sample "
                    "size for 0/1 scores (a cell with no variance: Wilson for its items)."
                    if _binary(data) else "95% CIs clustered by item.") + errored_note),
    ]
    tables += cost_tables(data.get("cost"), factors)
    analysis = data.get("analysis") or {}
    anova = anova_rows(analysis)
    if anova:
        binomial = (analysis.get("model") or {}).get("family") == "binomial"
        if binomial:
            cols = ["term", "chi2", "df", "p", "p_test", "separation", "deviance_r2",
                    "partial_deviance_r2", "latent_r2", "partial_latent_r2"]
            note = ("chi2: likelihood-ratio (penalised under Firth) deviance drop; p: the "
                    "test named in p_test. deviance_r2 = chi2 / null deviance (non-partial), "
                    "partial_deviance_r2 = chi2 / (chi2 + residual deviance); latent_r2 / "
                    "partial_latent_r2: the term's share of the logit-scale variance "
                    "(fixed + pi^2/3), non-partial / partial.")
        else:
            cols = ["term", "sum_sq", "df", "F", "p", "eta2", "partial_eta2", "omega2",
                    "partial_omega2"]
            note = ("eta2 = SS / SS_total and omega2 are non-partial; partial_eta2 = SS / "
                    "(SS + SS_resid) and partial_omega2 are partial (term vs residual).")
        tables.append(Table("anova", "ANOVA", cols, [[r.get(c) for c in cols] for r in anova],
                            note=note))
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


