"""MedVersa: medical knowledge editing under single, batch and sequential protocols.

Xia et al., "MedREK: Retrieval-Based Editing for Medical LLMs with Key-Aware Prompts",
ICML 2026 (arXiv 2510.13500). Each record edits a medical fact to a counterfactual answer
and probes efficacy (the edit prompt), generality (a paraphrase) and locality (an unrelated
medical question whose pre-edit behaviour must survive).

On an HF model (``whitebox/…`` or Inspect's ``hf/…``) the metrics are the spec's white-box
ones: teacher-forced token accuracy, locality against the pre-edit argmax, n-gram-entropy
fluency. On any other model the task scores the text-match deviation "MedVersa-BB".

    inspect eval benchmarks/medversa --model whitebox/smollm2-135m -T editor=ike
    inspect eval benchmarks/medversa --model whitebox/smollm2-135m \\
        -T editor=retrieval -T protocol=batch -T batch_size=100 -T data=PATH/test.json -T n=100
    inspect eval harness/medversa --model whitebox/smollm2-135m -T editor=medrek -T fluency=false
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from benchmarks.medversa.protocol import (
    BB_LABEL,
    Protocol,
    make_units,
    run_blackbox_unit,
    run_whitebox_unit,
)
from benchmarks.medversa.scorer import medversa_scorer
from benchmarks.medversa.whitebox import WhiteBoxRunner
from environments.medversa.load import load_dataset, resolve
from environments.medversa.schema import EditCase
from environments.medversa.split import (
    Split,
    check_disjoint,
    released_train_file,
    seeded_split,
    without_shared_queries,
)
from harness.plugins.benchmark import benchmark
from harness.plugins.editor import Editor, EditTriple, editor_names, is_whitebox, make_editor

DEFAULT_DATA = "sample"
DEFAULT_EDITOR = "ike"
DEFAULT_PROTOCOL: Protocol = "single"
DEFAULT_BATCH_SIZE = 10
DEFAULT_SEED = 0
DEFAULT_FLUENCY_TOKENS = 100
DEFAULT_TRAIN = "auto"
FORWARD_STORE_ENV = "EVALSUITE_MEDVERSA_FORWARDS"
"""Set to a file path to keep the white-box forward cache across processes (the study
and the full-protocol run then share forwards); unset, the cache lives in the process."""
WB_LABEL = "MedVersa white-box (spec §2)"
BB_SYSTEM = "Answer with the shortest possible phrase."
BB_MAX_TOKENS = 32


def record_to_sample(unit: list[EditCase], protocol: str, index: int) -> Sample:
    """One evaluation unit (one record, or one batch) as an Inspect sample."""
    sample_id = unit[0].id if protocol == "single" else f"{protocol}-{index:04d}"
    return Sample(
        id=sample_id,
        input=unit[0].prompt if len(unit) == 1 else f"{len(unit)} edits",
        target=unit[0].target_new if len(unit) == 1 else "",
        metadata={"cases": [c.to_record() for c in unit], "protocol": protocol},
    )


def train_records(cases: Sequence[EditCase]) -> list[Any]:
    """What editors that learn train on, one row per train record: (edit prompt,
    paraphrase, first locality prompt, target_new, its locality answer). ``retrieval``
    reads the first three fields (its :data:`~harness.plugins.editor.EditTriple`), ``medrek`` all
    five (its prompt encoder needs the answers)."""
    return [(c.prompt, c.rephrase_prompt, c.locality[0].prompt, c.target_new,
             c.locality[0].ground_truth) for c in cases]


def editor_train() -> list[EditTriple]:
    """(edit prompt, paraphrase, locality prompt) triples of the shipped sample set's train
    split (what a retriever trains on without the task, e.g. in the latency benchmark)."""
    return [(r[0], r[1], r[2]) for r in train_records(make_split("sample").train)]


def make_split(data: str, train: str = DEFAULT_TRAIN, n_train: int | None = None,
               seed: int = DEFAULT_SEED) -> Split:
    """Train and evaluation records for ``data``.

    ``train="auto"``: the released ``train.json`` beside the evaluated file when present
    (all evaluated records kept), else a seeded split of the records at hand
    (:func:`environments.medversa.split.seeded_split`, ``n_train`` records or 20%);
    ``"split"``: always the seeded split; any other value: a file or dataset id to train on.
    A train file loses the records that share a query with an evaluated one (the released
    splits overlap on 37 test records; the count is in the split's ``source``), and the two
    sides are checked disjoint either way.
    """
    cases = load_dataset(data)
    source = None
    if train == "auto":
        path = resolve(data)
        source = released_train_file(path) if path.is_file() else None
    elif train != "split":
        source = resolve(train)
    if source is None:
        return seeded_split(cases, n_train, seed)
    loaded = load_dataset(source)
    train_cases = list(without_shared_queries(loaded, cases))
    dropped = len(loaded) - len(train_cases)
    if n_train is not None:
        order = np.random.default_rng(seed).permutation(len(train_cases))[:n_train]
        train_cases = [train_cases[i] for i in sorted(order)]
    check_disjoint(train_cases, cases)
    label = f"released:{source}"
    if dropped:
        label += f" (less {dropped} records sharing a query with the evaluated ones)"
    return Split(tuple(train_cases), tuple(cases), label)


_RUNNERS: dict[int, tuple[WhiteBoxRunner, threading.Lock]] = {}


def _whitebox(api: Any) -> tuple[WhiteBoxRunner, threading.Lock] | None:
    """A runner for an HF-backed model API (``whitebox/`` or Inspect's ``hf/``), else None."""
    lm = getattr(api, "lm", None)
    model = getattr(lm, "model", None) or getattr(api, "model", None)
    tokenizer = getattr(lm, "tokenizer", None) or getattr(api, "tokenizer", None)
    if model is None or tokenizer is None or not hasattr(model, "forward"):
        return None
    if id(model) not in _RUNNERS:
        lock = getattr(api, "_lock", None) or threading.Lock()
        store = os.environ.get(FORWARD_STORE_ENV) or None
        _RUNNERS[id(model)] = (WhiteBoxRunner(model, tokenizer, cache=True, store=store), lock)
    return _RUNNERS[id(model)]


TRAINING_FIELDS = ("key", "steps", "records", "cached", "weights_digest", "platform")
"""What a sample records of a trained editor: enough to tell whether two runs used the same
trained weights (the same key on two CPUs can name different bf16-trained encoders)."""


def training_summary(editor: Editor) -> dict[str, Any] | None:
    """The identifying part of an editor's ``train_report`` (editors that train set one)."""
    report = getattr(editor, "train_report", None)
    if not report:
        return None
    return {k: report[k] for k in TRAINING_FIELDS if k in report}


@functools.lru_cache(maxsize=8)
def _train_rows(data: str, train: str, n_train: int | None, seed: int) -> list[Any]:
    """:func:`train_records` of the split, built once per process per split."""
    return train_records(make_split(data, train, n_train, seed).train)


@solver
def edit_and_probe(editor: str, protocol: Protocol, fluency_tokens: int, seed: int,
                   data: str = DEFAULT_DATA, train: str = DEFAULT_TRAIN,
                   n_train: int | None = None) -> Solver:
    """Apply the unit's edits with ``editor`` and score every probe (spec §3); editors that
    learn train on the train split of ``data`` (see :func:`make_split`)."""
    rows = _train_rows(data, train, n_train, seed)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        cases = [EditCase.from_record(r) for r in state.metadata["cases"]]
        model = get_model()
        wb = _whitebox(model.api)
        if wb is not None:
            runner, lock = wb

            def run() -> Any:
                with lock:
                    ed = make_editor(editor, runner.model, runner.tokenizer, train=rows)
                    return (run_whitebox_unit(runner, ed, cases, protocol, fluency_tokens, seed),
                            training_summary(ed))

            result, training = await asyncio.to_thread(run)
            variant = WB_LABEL
        else:
            if is_whitebox(editor):
                raise ValueError(f"editor {editor!r} needs an HF model (whitebox/ or hf/)")
            ed = await asyncio.to_thread(lambda: make_editor(editor, train=rows))
            config = GenerateConfig(temperature=0.0, max_tokens=BB_MAX_TOKENS)

            async def ask(context: str, query: str) -> str:
                text = (f"Updated facts (these override what you know):\n{context}\n"
                        f"Question: {query}" if context else f"Question: {query}")
                out = await model.generate(
                    [ChatMessageSystem(content=BB_SYSTEM), ChatMessageUser(content=text)],
                    config=config)
                return out.completion

            result = await run_blackbox_unit(ask, ed, cases, protocol)
            variant, training = BB_LABEL, None
        state.metadata["medversa"] = {
            "variant": variant, "editor": editor, "unit_means": result.unit_means(),
            "scores": result.scores, "case_ids": result.case_ids, "details": result.details,
        }
        if training is not None:
            state.metadata["medversa"]["editor_training"] = training
        return state

    return solve


@benchmark("medversa")
@task
def medversa(
    editor: str = DEFAULT_EDITOR,
    protocol: Protocol = DEFAULT_PROTOCOL,
    batch_size: int = DEFAULT_BATCH_SIZE,
    data: str = DEFAULT_DATA,
    n: int | None = None,
    seed: int = DEFAULT_SEED,
    fluency: bool = True,
    fluency_tokens: int = DEFAULT_FLUENCY_TOKENS,
    train: str = DEFAULT_TRAIN,
    n_train: int | None = None,
) -> Task:
    """MedVersa knowledge editing with one editor under one protocol.

    Args:
        editor: A registered editor (``harness list``): none, ike, retrieval or medrek
            (medrek: HF models only).
        protocol: single (one edit per unit), batch (``batch_size`` edits applied at once,
            final short batch kept) or sequential (``batch_size`` edits applied one by one,
            remainder dropped).
        batch_size: Edits per unit for batch/sequential (the spec reports 10, 50, 100).
        data: ``sample`` (the shipped set), a path to a MedVersa/MedCF/MedFE JSON file, or
            ``medversa:<split>`` with ``$MEDVERSA_DIR`` set.
        n: Use the first ``n`` records after the seeded shuffle (all by default).
        seed: Shuffle seed (``numpy.random.default_rng``).
        fluency: Sample continuations for the n-gram-entropy fluency metric (white-box).
        fluency_tokens: New tokens per fluency continuation (spec: 100).
        train: Where ``retrieval``/``medrek`` train: ``auto`` (the released ``train.json``
            beside ``data`` if present, else a seeded, subject-stratified split of the
            records at hand that the evaluation never sees), ``split`` (always that split)
            or a file / dataset id.
        n_train: Train records for the seeded split (default 20% of the records), or the
            first ``n_train`` of a released train file after the seeded shuffle.
    """
    if editor not in editor_names():
        raise ValueError(f"editor must be one of {', '.join(editor_names())}, got {editor!r}")
    split = make_split(data, train, n_train, seed)
    units = make_units(list(split.eval), protocol, batch_size, seed, n)
    samples = [record_to_sample(u, protocol, i) for i, u in enumerate(units)]
    return Task(
        dataset=MemoryDataset(samples, name=f"medversa-{protocol}"),
        solver=edit_and_probe(editor, protocol, fluency_tokens if fluency else 0, seed,
                              data, train, n_train),
        scorer=medversa_scorer(),
        version="1.0.0",
        metadata={"benchmark": "medversa", "editor": editor, "protocol": protocol,
                  "batch_size": batch_size if protocol != "single" else 1,
                  "train_split": split.source, "n_train": len(split.train),
                  "n_eval": len(split.eval)},
    )
