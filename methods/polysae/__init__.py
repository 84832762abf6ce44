"""Sparse autoencoders on residual activations: PolySAE (polynomial decoder) vs TopK SAE."""
