"""Long-term forecasting: DLinear, with and without a train-only retrieved continuation
(KUP-BI)."""
