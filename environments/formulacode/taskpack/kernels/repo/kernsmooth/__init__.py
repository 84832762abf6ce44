"""kernsmooth: a small scientific-Python package of the FormulaCode offline pack."""

from kernsmooth.model import KernelRidge, rbf

__all__ = ['KernelRidge', 'rbf']
