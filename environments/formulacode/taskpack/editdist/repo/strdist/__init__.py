from strdist.core import levenshtein

__all__ = ["levenshtein"]
