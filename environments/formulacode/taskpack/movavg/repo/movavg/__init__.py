"""movavg: a small scientific-Python package of the FormulaCode offline pack."""

from movavg.core import detrend, rolling_mean

__all__ = ['rolling_mean', 'detrend']
