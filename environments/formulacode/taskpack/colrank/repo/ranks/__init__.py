from ranks.core import rank_columns, spearman

__all__ = ["rank_columns", "spearman"]
