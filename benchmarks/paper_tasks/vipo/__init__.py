"""Offline model-based RL on a pendulum: VIPO's value-inconsistency model loss vs MOPO."""
