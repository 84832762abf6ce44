"""HFM: few-shot transport to text roots, hyperbolic vs Euclidean flow matching."""
