"""KV-cache methods for the ``whitebox/`` backend: xKV, ArborKV and SCD.

Each is a :class:`harness.plugins.whitebox_method.Method` registered by name, so any benchmark runs
with it unchanged (``--model whitebox/smollm2-135m -M method=xkv -M ratio=4``). They share
:mod:`methods.kv.cache` (cache plumbing, byte accounting, agreement metrics) and report
``ModelOutput.metadata["kv"]`` (bytes kept vs the full cache, agreement with the full-cache
greedy tokens) for the factorial studies in ``methods/studies/kv_*.yaml``. See README.md.
Importing this package is light; the submodules import torch.
"""
