"""Seeded arithmetic problems: the suite's self-test world (no Inspect imports here)."""

from environments.arithmetic.generator import Problem, evaluate, generate_problems

__all__ = ["Problem", "evaluate", "generate_problems"]
