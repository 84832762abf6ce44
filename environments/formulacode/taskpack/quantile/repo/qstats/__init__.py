from qstats.core import Sample

__all__ = ["Sample"]
