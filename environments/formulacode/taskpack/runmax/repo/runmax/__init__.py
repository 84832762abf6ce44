"""runmax: a small scientific-Python package of the FormulaCode offline pack."""

from runmax.core import envelope_width, sliding_max

__all__ = ['sliding_max', 'envelope_width']
