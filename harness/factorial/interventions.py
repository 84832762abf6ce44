"""Instance-level interventions: seeded rewrites of Inspect samples that keep gold valid.

A dataset's own quirks (option order, wording, distractions, number formats, names) move
scores as much as models do. An intervention rewrites every sample the same way on any
Inspect dataset, so it can be a factor level: the item id never changes, so items pair
across levels, and the gold answer stays correct, so a score change is the model's.

Each intervention is a registered name with ``apply(sample, seed) -> Sample``; the random
choices for a sample depend only on (name, seed, sample id), never on dataset order::

    from harness.factorial.interventions import apply_intervention
    task = apply_intervention(arithmetic(n=20), "distractor", seed=0)

Registered: ``none``, ``option_permutation``, ``paraphrase``, ``distractor``,
``format_json``, ``format_prose``, ``number_format``, ``entity_rename``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from typing import Any, overload

from inspect_ai import Task, task_with
from inspect_ai.dataset import Dataset, MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageUser

from harness import inspect_compat
from harness.plugins.intervention import (
    Intervention,
    get_intervention,
    intervention,
    list_interventions,
)

__all__ = [
    "Intervention",
    "apply",
    "apply_intervention",
    "extract_answer",
    "get_intervention",
    "intervention",
    "list_interventions",
]


def apply(sample: Sample, name: str, seed: int = 0) -> Sample:
    """Apply the intervention ``name`` to one sample."""
    return get_intervention(name).apply(sample, seed)


# --------------------------------------------------------------------------- text helpers


def _map_input_text(sample: Sample, fn: Callable[[str], str]) -> Sample:
    """Rewrite the text of a string input, or of the last user message of a chat input."""
    if isinstance(sample.input, str):
        return sample.model_copy(update={"input": fn(sample.input)})
    messages: list[ChatMessage] = list(sample.input)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, ChatMessageUser) and isinstance(message.content, str):
            messages[index] = message.model_copy(update={"content": fn(message.content)})
            break
    return sample.model_copy(update={"input": messages})


def _set_metadata(sample: Sample, **values: Any) -> Sample:
    return sample.model_copy(update={"metadata": {**(sample.metadata or {}), **values}})


# --------------------------------------------------------------------------- interventions


@intervention("none", "the unchanged sample (the control level)")
def _none(sample: Sample, rng: random.Random) -> Sample:
    return sample


_LETTER = re.compile(r"^[A-Z]$")


@intervention("option_permutation", "shuffle multiple-choice options and remap the target")
def _option_permutation(sample: Sample, rng: random.Random) -> Sample:
    choices = list(sample.choices or [])
    if len(choices) < 2:
        return sample  # not multiple choice: nothing to permute
    order = list(range(len(choices)))
    rng.shuffle(order)  # new position i shows old option order[i]
    new_position = {old: new for new, old in enumerate(order)}

    def remap(letter: str) -> str:
        if not _LETTER.match(letter) or ord(letter) - 65 >= len(choices):
            return letter  # a target that is not an option letter stays as it is
        return chr(65 + new_position[ord(letter) - 65])

    target = sample.target
    new_target: str | list[str] = (
        remap(target) if isinstance(target, str) else [remap(t) for t in target]
    )
    out = sample.model_copy(update={"choices": [choices[i] for i in order], "target": new_target})
    return _set_metadata(out, option_order=order)


_PARAPHRASES = (
    "Please answer the following.\n\n{text}",
    "Question: {text}\nAnswer:",
    "{text}\n\nTake care to get this exactly right.",
    "Here is a problem for you. {text}",
    "Read the task below and respond.\n{text}",
)


@intervention("paraphrase", "wrap the instruction in one of a few fixed templates")
def _paraphrase(sample: Sample, rng: random.Random) -> Sample:
    index = rng.randrange(len(_PARAPHRASES))
    out = _map_input_text(sample, lambda text: _PARAPHRASES[index].format(text=text))
    return _set_metadata(out, paraphrase_template=index)


# true, irrelevant, and free of digits so no number can be mistaken for part of a problem
_DISTRACTORS = (
    "The Pacific is the largest ocean on Earth.",
    "Honey bees communicate the location of flowers by dancing.",
    "Mount Everest lies on the border between Nepal and China.",
    "Octopuses have three hearts.",
    "The Sahara is a desert in northern Africa.",
    "Venus rotates in the opposite direction to most planets.",
    "Penguins live almost exclusively in the Southern Hemisphere.",
    "Sound travels faster in water than in air.",
)


@intervention("distractor", "append an irrelevant true sentence to the input")
def _distractor(sample: Sample, rng: random.Random) -> Sample:
    sentence = _DISTRACTORS[rng.randrange(len(_DISTRACTORS))]
    return _set_metadata(_map_input_text(sample, lambda text: f"{text} {sentence}"),
                         distractor=sentence)


_JSON_REQUEST = '\n\nGive your final answer as JSON only, in the form {"answer": ...}.'
_PROSE_REQUEST = "\n\nExplain briefly, then state your final answer in a full sentence."


@intervention("format_json", 'ask for the answer as JSON {"answer": ...}')
def _format_json(sample: Sample, rng: random.Random) -> Sample:
    out = _map_input_text(sample, lambda text: text + _JSON_REQUEST)
    return _set_metadata(out, answer_format="json")


@intervention("format_prose", "ask for the answer in prose")
def _format_prose(sample: Sample, rng: random.Random) -> Sample:
    out = _map_input_text(sample, lambda text: text + _PROSE_REQUEST)
    return _set_metadata(out, answer_format="prose")


def extract_answer(completion: str, metadata: dict[str, Any] | None) -> str:
    """The answer a scorer should compare: the JSON ``answer`` when the sample asked for
    JSON (``metadata["answer_format"] == "json"``) and the completion parses, else the
    completion itself."""
    if (metadata or {}).get("answer_format") == "json":
        for match in reversed(list(re.finditer(r"\{[^{}]*\}", completion))):
            try:
                value = json.loads(match.group(0))
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and "answer" in value:
                return str(value["answer"])
    return completion


_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
          "ten", "eleven", "twelve")
# a number not touching an operator, digit, decimal point or another number's comma
_NUMBER = re.compile(r"(?<![\d.,+\-*/=^<>])(?<![\d.+\-*/=^<>] )\d+(?![\d.,])(?! ?[+\-*/=^<>])")


@intervention("number_format", "1234 -> 1,234; small free-standing numbers as words (input only)")
def _number_format(sample: Sample, rng: random.Random) -> Sample:
    def rewrite(text: str) -> str:
        def one(match: re.Match[str]) -> str:
            value = int(match.group(0))
            if match.group(0).startswith("0") and len(match.group(0)) > 1:
                return match.group(0)  # leading zeros (codes, times): leave alone
            if value >= 1000:
                return f"{value:,}"
            if value < len(_WORDS):
                return _WORDS[value]
            return match.group(0)

        return _NUMBER.sub(one, text)

    return _map_input_text(sample, rewrite)


# language-neutral given names: short, common across many languages, no grammatical gender
NAMES = ("Alex", "Sam", "Kim", "Noor", "Ravi", "Lena", "Omar", "Mei", "Tomas", "Ana",
         "Yuki", "Kofi", "Ines", "Arjun", "Zara", "Milan", "Sara", "Leo", "Nia", "Emil")
_NAME = re.compile(r"\b(" + "|".join(NAMES) + r")\b")


@intervention("entity_rename", "rename listed person names consistently in input and target")
def _entity_rename(sample: Sample, rng: random.Random) -> Sample:
    texts = [sample.input if isinstance(sample.input, str) else
             " ".join(m.text for m in sample.input)]
    texts += [sample.target] if isinstance(sample.target, str) else list(sample.target)
    texts += list(sample.choices or [])
    found = sorted({m.group(0) for text in texts for m in _NAME.finditer(text)})
    if not found:
        return sample
    unused = [name for name in NAMES if name not in found]
    rng.shuffle(unused)
    mapping = dict(zip(found, unused, strict=False))

    def rename(text: str) -> str:
        return _NAME.sub(lambda m: mapping.get(m.group(0), m.group(0)), text)

    out = _map_input_text(sample, rename)
    target = out.target
    update: dict[str, Any] = {
        "target": rename(target) if isinstance(target, str) else [rename(t) for t in target],
    }
    if out.choices:
        update["choices"] = [rename(c) for c in out.choices]
    return _set_metadata(out.model_copy(update=update), renamed=mapping)


# --------------------------------------------------------------------------- datasets, tasks


def _transform_dataset(dataset: Dataset | Sequence[Sample], name: str, seed: int) -> Dataset:
    chosen = get_intervention(name)
    samples = [chosen.apply(sample, seed) for sample in dataset]
    return MemoryDataset(
        samples,
        name=getattr(dataset, "name", None),
        location=getattr(dataset, "location", None),
        shuffled=bool(getattr(dataset, "shuffled", False)),
    )


def _record_task_args(task: Task, name: str, seed: int) -> None:
    """Add the intervention to the task's recorded args.

    Why: ``eval_set`` pairs tasks with existing logs by name, args, model and plan, never
    by dataset, so two cells that differ only by intervention would otherwise collide and
    a rerun could not tell them apart. The args recorded here also show in the log header.
    Inspect keeps those args privately; :mod:`harness.inspect_compat` is the one place
    that reaches them.
    """
    inspect_compat.record_task_args(task, {"intervention": name, "intervention_seed": seed})


@overload
def apply_intervention(obj: Task, name: str, seed: int = 0) -> Task: ...


@overload
def apply_intervention(obj: Dataset | Sequence[Sample], name: str, seed: int = 0) -> Dataset: ...


def apply_intervention(
    obj: Task | Dataset | Sequence[Sample], name: str, seed: int = 0
) -> Task | Dataset:
    """Apply an intervention to every sample of a dataset or of a task's dataset.

    For a Task, the task is updated in place (as Inspect's ``task_with`` does) and returned:
    its dataset is transformed, its metadata records ``{"intervention": {name, seed}}``
    and its recorded task args gain ``intervention`` and ``intervention_seed``.
    ``none`` returns a Task unchanged except for that record.
    """
    if isinstance(obj, Task):
        dataset = obj.dataset if name == "none" else _transform_dataset(obj.dataset, name, seed)
        metadata = {**(obj.metadata or {}), "intervention": {"name": name, "seed": seed}}
        out = task_with(obj, dataset=dataset, metadata=metadata)
        _record_task_args(out, name, seed)
        return out
    return _transform_dataset(obj, name, seed)
