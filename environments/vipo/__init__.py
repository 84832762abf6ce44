"""A seeded numpy pendulum, offline datasets of two qualities, a grid planner and the
policy evaluation that VIPO's offline model-based RL is scored by. No Inspect imports."""

from environments.vipo.pendulum import (
    ACTIONS,
    Dataset,
    Grid,
    evaluate,
    make_dataset,
    obs,
    oracle_policy,
    random_return,
    step,
    trajectories,
)

__all__ = ["ACTIONS", "Dataset", "Grid", "evaluate", "make_dataset", "obs", "oracle_policy",
           "random_return", "step", "trajectories"]
