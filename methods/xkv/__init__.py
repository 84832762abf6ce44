"""xKV (Chang et al., 2025): cross-layer SVD of the prefill KV cache (:mod:`.xkv`), its
selective reconstruction at decode time (:mod:`.sr`) and the CKA probe of cross-layer
alignment the method rests on (:mod:`.cka`); cache plumbing shared with the other KV methods
is :mod:`methods.kv.cache`. Importing this package is light; the submodules import torch."""
