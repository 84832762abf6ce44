"""RL for language models on the white-box backend: a seeded, resumable CPU trainer.

* :mod:`methods.rl.trainer`: K samples per prompt, GRPO or PMD-mean, rollout staleness,
  k3 KL to the frozen start, checkpoints as model folders ``whitebox/`` loads, resume.
* :mod:`methods.rl.losses`: GRPO (DeepSeekMath) and PMD-mean (arXiv 2602.05933) losses.
* :mod:`methods.rl.rollouts`: prompts, rewards (any suite task's scorer) and rollout sources
  (sampled from the policy, or recorded elsewhere: ThetaEvolve's journal, a scout's
  dialogues), the seam later methods plug into.
* :mod:`methods.rl.policy`: sampling with an explicit generator, sequence log-probs.
* :mod:`methods.rl.curves`: training curves and stability over seeds of built products.

The papers that use it keep their own code in their folders: PMD-mean's recipes and
exact bandit check in :mod:`methods.rl_pmd`, ThetaEvolve's test-time RL in
:mod:`methods.thetaevolve`, SCOUT's last stage in :mod:`methods.scout`.
"""
