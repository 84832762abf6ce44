"""Parametric knowledge editors: the edit is written into the model, not into a prompt.

``ft-l`` (:mod:`.ftl`, constrained fine-tuning of one MLP layer), ``rome`` (:mod:`.rome`,
rank-one edit of one MLP down-projection), ``memit`` (:mod:`.memit`, one least-squares
update of several layers per batch of edits), ``grace`` (:mod:`.grace`, a codebook
adaptor with a deferral radius) and ``wise`` (:mod:`.wise`, side memories of one layer's
output projection, routed by activation). Shared pieces: :mod:`.base` (MLP access, edit batches,
exact restore) and :mod:`.covariance` (the key second moments ROME and MEMIT weigh their
updates with, cached on disk). All import torch, so :mod:`methods.editors` declares them by
import path and they load on first use.
"""
