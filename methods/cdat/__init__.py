"""Unsupervised graph anomaly scoring: energy-descent attention (CDAT) vs plain attention."""
