"""pairdist: a small scientific-Python package of the FormulaCode offline pack."""

from pairdist.core import nearest_index, pairwise_distances

__all__ = ['pairwise_distances', 'nearest_index']
