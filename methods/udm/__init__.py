"""UDM-GRPO (Wang et al., arXiv 2604.18518) on a tiny uniform discrete diffusion model.

``diffusion`` (forward process, denoiser, reverse kernel, sampler), ``grpo`` (group-relative
advantages; the naive per-step objective and UDM-GRPO's final-sample objective with
forward-process reconstruction), ``reward`` (the constraint reward from data), ``train``
(pretraining, the RL loop, checkpoints and resume, the cached run), ``plain`` (the two plain
methods of the ``udm_strings`` method task), ``curves`` (training curves and stability across
seeds from the run cache). Nothing here imports torch at package import.
"""
