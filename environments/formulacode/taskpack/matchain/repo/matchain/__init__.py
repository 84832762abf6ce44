"""matchain: a small scientific-Python package of the FormulaCode offline pack."""

from matchain.core import apply_chain, chain_norms

__all__ = ['apply_chain', 'chain_norms']
