"""The README sections that are generated from data: the benchmark table from each
benchmark's ``eval.yaml``, the study table (claim, our contrast, verdict) from each study
folder's ``study.yaml`` and ``report.json``. ``harness readme --write`` rewrites them,
``harness readme --check`` says whether they are current (a test runs it)."""
