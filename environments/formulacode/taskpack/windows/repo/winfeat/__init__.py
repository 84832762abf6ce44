from winfeat.core import rolling_mean, rolling_std

__all__ = ["rolling_mean", "rolling_std"]
