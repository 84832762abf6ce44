"""Procedural pretraining (Jiang et al., arXiv 2601.21725): the ``procedural-pretraining``
recipe (:mod:`.procedural`) and its seeded byte generators (:mod:`.procedural_data`)."""
