"""FormulaCode environment: task records, the offline task pack, the grader and metrics.

No Inspect and no harness imports here (``benchmarks/formulacode`` adapts this to Inspect;
its ``grading`` module adds the statistics of ``harness.stats`` to these metrics). See
``benchmarks/formulacode/README.md`` for the benchmark and its evaluation report.
"""

from environments.formulacode.metrics import geomean, level_advantages
from environments.formulacode.records import TaskRecord, load_records, normalize

__all__ = ["TaskRecord", "geomean", "level_advantages", "load_records", "normalize"]
