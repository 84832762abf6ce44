"""Bridging spherical black-box optimisers (ICML 2026): ES, CBO, OVI and the hybrids
(:mod:`.bbo`) and their language-model-merging use, the ``bbo-merge`` recipe
(:mod:`.bbo_merge`)."""
