"""Continual pre-training spectra and attention-head rewinding (Diffract): the ``cpt`` and
``head-rewind`` recipes (:mod:`.cpt_rewind`)."""
