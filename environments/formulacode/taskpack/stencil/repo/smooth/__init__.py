from smooth.core import KERNELS, smooth

__all__ = ["KERNELS", "smooth"]
