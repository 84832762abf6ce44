"""Concept vectors in multi-modal attention heads vs at a bottleneck (joint-attention T2I)."""
