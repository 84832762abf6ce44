"""Seeded Lorenz-96 trajectories as (noisy observed state -> true state at a lead time)
pairs, and the ensemble scores of probabilistic forecasting (U-Cast paper's setting in
miniature). No Inspect imports."""

from environments.ucast.lorenz96 import ForecastData, make_data, rk4_step, simulate, tendency
from environments.ucast.scores import ensemble_scores, fair_crps

__all__ = ["ForecastData", "ensemble_scores", "fair_crps", "make_data", "rk4_step",
           "simulate", "tendency"]
