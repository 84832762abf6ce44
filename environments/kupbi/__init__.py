"""Series that ship with statsmodels, cut into forecasting windows with a rolling origin
(KUP-BI paper's long-term forecasting setting). No Inspect imports."""

from environments.kupbi.series import SERIES, Split, load_series, make_split, windows

__all__ = ["SERIES", "Split", "load_series", "make_split", "windows"]
