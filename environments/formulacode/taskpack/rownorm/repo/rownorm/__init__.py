"""rownorm: a small scientific-Python package of the FormulaCode offline pack."""

from rownorm.core import normalize_rows

__all__ = ['normalize_rows']
