from scorer.core import MLP, score_all

__all__ = ["MLP", "score_all"]
