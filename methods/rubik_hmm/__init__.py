"""Rubik HMM: value heuristics trained on HMM soft cost-to-go labels vs on scramble depth."""
