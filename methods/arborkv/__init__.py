"""ArborKV: tree-of-thoughts decoding where every node owns its KV, under a memory budget
(:mod:`.arbor`; cache plumbing in :mod:`methods.kv.cache`). The submodule imports torch."""
