"""textdist: a small scientific-Python package of the FormulaCode offline pack."""

from textdist.core import closest, edit_distance

__all__ = ['edit_distance', 'closest']
