from kernsmooth.model import KernelRidge

__all__ = ["KernelRidge"]
