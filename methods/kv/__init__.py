"""Machinery shared by the KV-cache methods on the ``whitebox/`` backend.

:mod:`methods.kv.cache` (cache plumbing, RoPE undo/redo, byte accounting, agreement metrics)
and :mod:`methods.kv.curves` (a KV study's memory-vs-quality table). The methods themselves
live in their papers' folders: :mod:`methods.xkv`, :mod:`methods.arborkv`, :mod:`methods.scd`
(issue 45: one folder name per paper). Each is a
:class:`harness.plugins.whitebox_method.Method` registered by name, so any benchmark runs with
it unchanged (``--model whitebox/smollm2-135m -M method=xkv -M ratio=4``), and reports
``ModelOutput.metadata["kv"]`` for the factorial studies in ``methods/studies/kv_*/``. See
README.md. Importing this package is light; the submodules import torch.
"""
