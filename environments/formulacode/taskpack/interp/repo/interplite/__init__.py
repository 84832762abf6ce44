"""interplite: a small scientific-Python package of the FormulaCode offline pack."""

from interplite.core import linear_interp, resample

__all__ = ['linear_interp', 'resample']
