"""linsolve: a small scientific-Python package of the FormulaCode offline pack."""

from linsolve.core import residual_norm, solve_many

__all__ = ['solve_many', 'residual_norm']
