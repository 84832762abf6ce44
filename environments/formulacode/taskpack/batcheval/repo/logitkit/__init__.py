"""logitkit: a small scientific-Python package of the FormulaCode offline pack."""

from logitkit.core import predict, predict_proba

__all__ = ['predict_proba', 'predict']
