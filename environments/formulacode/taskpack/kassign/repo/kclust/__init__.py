from kclust.core import assign, inertia

__all__ = ["assign", "inertia"]
