"""clusterlite: a small scientific-Python package of the FormulaCode offline pack."""

from clusterlite.components import component_sizes, connected_components

__all__ = ['connected_components', 'component_sizes']
