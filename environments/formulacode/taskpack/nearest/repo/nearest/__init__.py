"""nearest: a small scientific-Python package of the FormulaCode offline pack."""

from nearest.core import snap_to_grid

__all__ = ['snap_to_grid']
