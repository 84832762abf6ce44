"""Seeded attributed graphs with injected structural and contextual anomalies (CDAT
paper's graph anomaly detection setting). No Inspect imports."""

from environments.cdat.anomalies import AnomalyGraph, make_anomaly_graph

__all__ = ["AnomalyGraph", "make_anomaly_graph"]
