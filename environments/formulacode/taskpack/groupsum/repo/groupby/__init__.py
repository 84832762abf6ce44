"""groupby: a small scientific-Python package of the FormulaCode offline pack."""

from groupby.core import group_means, group_sums

__all__ = ['group_sums', 'group_means']
