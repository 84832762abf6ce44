from actfn.core import KINDS, apply

__all__ = ["KINDS", "apply"]
