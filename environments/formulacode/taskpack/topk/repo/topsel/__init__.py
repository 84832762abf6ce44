from topsel.core import top_k, top_k_rows

__all__ = ["top_k", "top_k_rows"]
