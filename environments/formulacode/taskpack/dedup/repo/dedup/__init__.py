from dedup.core import count_distinct, unique_ordered

__all__ = ["count_distinct", "unique_ordered"]
