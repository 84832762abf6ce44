"""Probabilistic forecasting with a tiny 1-D U-Net: MAE pre-training, then CRPS
fine-tuning through Monte Carlo dropout (U-Cast), against MAE only."""
