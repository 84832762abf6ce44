from colsum.core import describe

__all__ = ["describe"]
