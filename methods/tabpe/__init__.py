"""Differentially private synthetic tables: private evolution (Tab-PE) and independent
noisy marginals."""
