"""PMD-mean vs GRPO (Xu et al., arXiv 2602.05933): the ``arith-sft`` and ``rl`` recipes
(:mod:`.rl_pmd`, on the shared trainer :mod:`methods.rl`) and the exact bandit check of
PMD-mean's population solution (:mod:`.bandit`)."""
