"""Hyperbolic flow matching for few-shot adaptation vs its Euclidean counterpart."""
