"""A seeded world of short strings for the UDM-GRPO method task: a sparse Markov chain that
makes the pretraining corpus, and seeded constraints whose satisfied fraction is the
verifiable reward. No Inspect, no torch: pure domain code with exact verifiers.
"""

from environments.udm.world import (
    Constraint,
    StringWorld,
    constraint_reward,
    in_support,
    make_world,
    render,
    sample_corpus,
    satisfied,
)

__all__ = ["Constraint", "StringWorld", "constraint_reward", "in_support", "make_world",
           "render", "sample_corpus", "satisfied"]
