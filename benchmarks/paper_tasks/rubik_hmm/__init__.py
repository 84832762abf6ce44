"""Learned search heuristics: HMM soft cost-to-go labels vs scramble depth (8-puzzle)."""
