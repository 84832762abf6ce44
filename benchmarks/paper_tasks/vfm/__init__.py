"""VFM: one-step posterior sampling by a learned noise adapter vs a guided sampler."""
