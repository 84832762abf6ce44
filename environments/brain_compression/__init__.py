"""Brain alignment under compression, the part that can be tested offline: templated
minimal pairs (syntax, morphology) and representational similarity between two models.

No fMRI data is on this machine, so a model's brain predictivity cannot be measured here;
this package holds what stands in for it: the linguistic probes the paper contrasts brain
predictivity with, and the similarity (linear CKA, RSA) of a compressed model's sentence
representations to the uncompressed model's. Pure numpy; the models are run elsewhere.
"""

from environments.brain_compression.pairs import PHENOMENA, MinimalPair, minimal_pairs
from environments.brain_compression.similarity import linear_cka, rdm, rsa

__all__ = ["PHENOMENA", "MinimalPair", "linear_cka", "minimal_pairs", "rdm", "rsa"]
