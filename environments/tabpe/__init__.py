"""Categorical tables for DP synthetic-data checks (Tab-PE): synthetic parity data with a
pure high-order correlation, and statsmodels' shipped ``fair`` survey, binned. No Inspect."""

from environments.tabpe.tables import Table, fair_table, make_table, parity_table

__all__ = ["Table", "fair_table", "make_table", "parity_table"]
