"""Zero/one-layer progressive depth training (Bu, arXiv 2511.04981): the
``progressive-depth`` recipe (:mod:`.progressive_depth`)."""
