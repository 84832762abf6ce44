"""Multimodal trajectory prediction: a GRU, with and without TF-FACE's gated frequency-band
attention, dual-stage decoder and dual-consistency loss."""
