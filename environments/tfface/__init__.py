"""Seeded synthetic 2-D trajectories at an intersection (straight / left / right / stop),
with low- and high-frequency structure, agent-centric (TF-FACE paper's trajectory
prediction setting). No Inspect imports."""

from environments.tfface.trajectories import (
    DT,
    MODES,
    Trajectories,
    TrajectorySplit,
    make_split,
    make_trajectories,
)

__all__ = ["DT", "MODES", "Trajectories", "TrajectorySplit", "make_split", "make_trajectories"]
