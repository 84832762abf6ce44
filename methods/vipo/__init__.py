"""VIPO: model-based offline RL whose model also minimises value inconsistency."""
