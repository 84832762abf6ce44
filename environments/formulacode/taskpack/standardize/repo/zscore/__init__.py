from zscore.core import standardize

__all__ = ["standardize"]
