"""Variational Flow Maps: one-step posterior sampling by a learned noise adapter."""
