"""partitions: a small scientific-Python package of the FormulaCode offline pack."""

from partitions.core import count_partitions, partition_table

__all__ = ['count_partitions', 'partition_table']
