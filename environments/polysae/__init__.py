"""PolySAE's data and metrics: templated compositional concepts with co-occurrence-matched
controls, a synthetic activation model with known pairwise compositions, and the scores.

Pure domain code (numpy, scikit-learn): the real activations (SmolLM2-135M's residual
stream) are read by ``benchmarks/paper_tasks/polysae``; this package only writes the
sentences, builds the synthetic stand-in and scores what a sparse autoencoder returns.
"""

from environments.polysae.concepts import CONCEPTS, Concept, ProbeSentence, probe_sentences
from environments.polysae.metrics import (
    cooccurrence,
    cv_f1,
    fvu,
    pair_correlation,
    topk_param_count,
)
from environments.polysae.synthetic import SyntheticActivations, synthetic_activations

__all__ = [
    "CONCEPTS",
    "Concept",
    "ProbeSentence",
    "SyntheticActivations",
    "cooccurrence",
    "cv_f1",
    "fvu",
    "pair_correlation",
    "probe_sentences",
    "synthetic_activations",
    "topk_param_count",
]
