"""sparselite: a small scientific-Python package of the FormulaCode offline pack."""

from sparselite.coo import COOMatrix, power_iteration

__all__ = ['COOMatrix', 'power_iteration']
