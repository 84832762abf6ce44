from textnorm.core import Normalizer

__all__ = ["Normalizer"]
