"""Node classification on heterophilous graphs: Haar filters on a learned hierarchy (HMH),
Chebyshev polynomial filters and a GCN-style low-pass filter, each with a linear readout."""
