from linsys.core import solve_many

__all__ = ["solve_many"]
