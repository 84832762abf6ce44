"""RL for language models on the white-box backend: a seeded, resumable CPU trainer.

* :mod:`methods.rl.trainer`: K samples per prompt, GRPO or PMD-mean, rollout staleness,
  k3 KL to the frozen start, checkpoints as model folders ``whitebox/`` loads, resume.
* :mod:`methods.rl.losses`: GRPO (DeepSeekMath) and PMD-mean (arXiv 2602.05933) losses.
* :mod:`methods.rl.rollouts`: prompts, rewards (any suite task's scorer) and rollout sources
  (sampled from the policy, or recorded elsewhere: ThetaEvolve's journal, a scout's
  dialogues), the seam later methods plug into.
* :mod:`methods.rl.policy`: sampling with an explicit generator, sequence log-probs.
* :mod:`methods.rl.bandit`: the exact bandit check of PMD-mean's mixed KL-chi^2
  characterisation (derivation in its docstring).
* :mod:`methods.rl.curves`: training curves and stability over seeds of built products.

The recipes that use it are in :mod:`methods.recipes.rl_pmd`.
"""
