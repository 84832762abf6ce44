from rollhash.core import adler32, chunk_boundaries

__all__ = ["adler32", "chunk_boundaries"]
