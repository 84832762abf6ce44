"""dedup: a small scientific-Python package of the FormulaCode offline pack."""

from dedup.core import count_distinct, unique_ordered

__all__ = ['unique_ordered', 'count_distinct']
