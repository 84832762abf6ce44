"""Estimators of the global average treatment effect under Markovian interference."""
