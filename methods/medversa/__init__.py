"""MedVersa's own editor, MedREK, white-box: soft prompts through forward hooks
(:mod:`.medrek`), its trained parts (:mod:`.medrek_train`) and the training-budget curve
(:mod:`.medrek_budget`). The benchmark is ``benchmarks/medversa``; the retrieval editor and
the baselines are shared machinery in :mod:`methods.editors`."""
