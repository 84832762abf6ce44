"""Factorial study reports: one analysis, written as JSON, Markdown and self-contained HTML.

``harness study report LOGDIR --out DIR`` calls :func:`build_report`, which

1. reads the study's logs through :mod:`harness.results` (reports never parse logs) and
   turns the ``factors`` recorded in each eval's metadata into one column per factor
   (:func:`study_frame`);
2. tabulates the design (cells, items, epochs, errors) and the per-cell means with
   item-clustered CIs (:mod:`harness.stats`);
3. runs :func:`harness.factorial.analysis.analyze` (ANOVA, effect sizes, variance shares,
   marginal means, pairwise, robustness, attribution, power);
4. writes ``report.json`` (the schema is documented in ``REPORT_SCHEMA.md`` next to this
   file and versioned by ``schema_version``), ``report.md`` and ``report.html``.

Why all three from one dict: the JSON is the contract other tools read; the Markdown and
the HTML are views of exactly that dict (via the same table list), so the three can never
disagree. The HTML embeds its plots as base64 PNGs and uses no scripts, fonts or URLs.

Layout: :mod:`.frame` (study frame), :mod:`.options` (defaults, shared keyword options),
:mod:`.sections`, :mod:`.attribution` and :mod:`.provenance` (the numbers),
:mod:`.assemble` (``report_data``: the dict), :mod:`.tables` and :mod:`.render` (the
views), :mod:`.build` (``build_report``: writing).
"""

from harness.factorial.report.assemble import report_data
from harness.factorial.report.build import build_report
from harness.factorial.report.frame import LOG_PREFIX, Source, study_factors, study_frame
from harness.factorial.report.options import (
    DEFAULT_ITEM,
    DEFAULT_ORDER,
    DEFAULT_RESPONSE,
    SCHEMA_VERSION,
    ReportOptions,
)
from harness.factorial.report.render import TEMPLATE, render_html, render_markdown, report_plots
from harness.factorial.report.tables import Table, report_tables

__all__ = [
    "DEFAULT_ITEM",
    "DEFAULT_ORDER",
    "DEFAULT_RESPONSE",
    "LOG_PREFIX",
    "SCHEMA_VERSION",
    "TEMPLATE",
    "ReportOptions",
    "Source",
    "Table",
    "build_report",
    "render_html",
    "render_markdown",
    "report_data",
    "report_plots",
    "report_tables",
    "study_factors",
    "study_frame",
]
