"""SCOUT: tabular scouts that explore games cheaply, a textualiser that turns their
trajectories into tool-calling dialogues, and the ``scout-sft`` recipe that fine-tunes a
tiny LM on them (see README.md)."""
