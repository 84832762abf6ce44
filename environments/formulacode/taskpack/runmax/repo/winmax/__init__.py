from winmax.core import running_max, running_min

__all__ = ["running_max", "running_min"]
