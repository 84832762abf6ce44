"""filterkit: a small scientific-Python package of the FormulaCode offline pack."""

from filterkit.core import fir_filter, smooth

__all__ = ['fir_filter', 'smooth']
