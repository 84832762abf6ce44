"""growarray: a small scientific-Python package of the FormulaCode offline pack."""

from growarray.core import collect_positive, running_totals

__all__ = ['running_totals', 'collect_positive']
