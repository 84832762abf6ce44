from binstat.core import bin_counts, bin_means

__all__ = ["bin_counts", "bin_means"]
