"""Gaussian-process regression three ways: exact, inducing points, sparse dyadic basis."""
