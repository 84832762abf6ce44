"""Writing a report: ``report.json``, ``report.md`` and ``report.html``.

Why thin: assembly (:mod:`.assemble`) and views (:mod:`.tables`, :mod:`.render`) do the work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Unpack

from harness.atomic import staged_folder
from harness.factorial.report.assemble import report_data
from harness.factorial.report.frame import Source
from harness.factorial.report.options import ReportOptions
from harness.factorial.report.render import render_html, render_markdown, report_plots
from harness.factorial.report.tables import report_tables


def build_report(
    source: Source, out_dir: str | Path, **options: Unpack[ReportOptions]
) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and ``report.html`` for a study into ``out_dir``.

    Args:
        source: The study's log directory (or log files), or a frame from
            :func:`study_frame` / :func:`harness.results.read_results`.
        out_dir: Folder to write to (created).
        **options: :class:`ReportOptions`: ``response`` (column analysed, default the
            score value); ``score_key`` (required when the logs hold several); ``factors``
            (default every factor recorded in the eval metadata); ``item`` (clusters CIs,
            blocks the analysis); ``order`` (highest interaction order in the model and the
            plots); ``title`` (default names the study); ``study`` (keep only this study's
            logs); ``command`` (the command line recorded as the report's origin);
            ``family`` (``gaussian`` linear model or ``binomial`` logit GLM for 0/1 scores);
            ``item_mode`` (``fixed``, ``cluster``, ``random`` or None: not modelled, still
            pairs comparisons and power); ``anova_type`` (2 or 3).

    Returns:
        ``{"json": path, "markdown": path, "html": path}``.
    """
    out = Path(out_dir)
    data = report_data(source, out_dir=out, **options)
    tables = report_tables(data)
    texts = {"json": json.dumps(data, indent=2, ensure_ascii=False) + "\n",
             "markdown": render_markdown(data, tables),
             "html": render_html(data, tables, report_plots(data))}
    names = {"json": "report.json", "markdown": "report.md", "html": "report.html"}
    # all three rendered first, then written beside and renamed over the old ones
    # (harness.atomic): a full disk or a kill leaves the previous report, never half of one
    with staged_folder(out) as stage:
        for kind, text in texts.items():
            (stage / names[kind]).write_text(text, encoding="utf-8")
    return {kind: out / name for kind, name in names.items()}

