"""polyeval: a small scientific-Python package of the FormulaCode offline pack."""

from polyeval.core import polyval, polyval_derivative

__all__ = ['polyval', 'polyval_derivative']
