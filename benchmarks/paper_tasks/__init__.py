"""Method tasks: seed papers whose method is not an LLM agent, one folder per paper.

Each runs the paper's method and its baseline as plain Python per sample (a cell: dataset x
seed x configuration) through :mod:`harness.method_tasks`, with ``--model none``.
"""
