"""SCD (Semantic Cache Distillation): a producer ships low-rank KV codes, a fine-tuned
consumer (:mod:`.consumer`) rebuilds its cache (:mod:`.scd`), a learned predictor patches a
few layers (:mod:`.scd_predictor`); :mod:`.scd_compare` is the per-rank paired table. The
submodules import torch."""
