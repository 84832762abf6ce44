from segments.core import segment_max, segment_sums

__all__ = ["segment_max", "segment_sums"]
