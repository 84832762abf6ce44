"""FormulaCode environment: task records, the offline task pack, the grader and metrics.

No Inspect imports here (``benchmarks/formulacode`` adapts this to Inspect). See
``benchmarks/formulacode/README.md`` for the benchmark and its evaluation report.
"""

from environments.formulacode.metrics import aggregate, evaluate, geomean, level_advantages
from environments.formulacode.records import TaskRecord, load_records, normalize

__all__ = ["TaskRecord", "aggregate", "evaluate", "geomean", "level_advantages",
           "load_records", "normalize"]
