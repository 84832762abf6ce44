"""MVR-cache: a multi-vector semantic cache in front of any model (:mod:`.mvrcache`), its
learned segmenter (:mod:`.mvr_segmenter`) and the study summary (:mod:`.mvrcache_summary`);
see README.md."""
