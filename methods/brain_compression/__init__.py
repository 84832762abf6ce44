"""Compressed copies of a causal LM (round-to-nearest quantisation, magnitude pruning) and
what a brain-alignment study reads from them: minimal-pair log-probabilities and sentence
representations."""
