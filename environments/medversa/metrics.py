"""MedVersa metrics exactly as the spec defines them (§2 white-box, §7 black-box deviation).

White-box scores are teacher-forced: the model sees prompt + target and is scored on whether
its argmax at each target position is the next target token (efficacy, generality), or the
same token it predicted before the edit (locality, which never looks at the locality answer).
The functions here take token ids and predictions as plain sequences, so they are testable
without a model; the benchmark runs the model and feeds them.
"""

from __future__ import annotations

import math
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Tokenize = Callable[[str], list[int]]
FLUENCY_WEIGHTS = (2 / 3, 4 / 3)  # n = 2, 3 (ROME / KnowEdit n-gram entropy)


@dataclass(frozen=True)
class TeacherForced:
    """Inputs ``x``, labels ``y`` and mask ``m`` of spec §2.1 (``len(x) == len(y) == len(m)``)."""

    inputs: list[int]
    labels: list[int]
    mask: list[int]

    @property
    def n_target(self) -> int:
        """Number of scored (target-predicting) positions."""
        return int(sum(self.mask))


def teacher_forced(tokenize: Tokenize, prompt: str, target: str) -> TeacherForced:
    """Spec §2.1: tokenize p and p + " " + t; mask the positions that predict target tokens.

    ``tokenize`` must add whatever BOS the model uses (the spec tokenizes "with BOS").
    """
    if not target.startswith(" "):
        target = " " + target
    n_prompt = len(tokenize(prompt))
    ids = tokenize(prompt + target)
    if len(ids) < 2 or n_prompt >= len(ids):
        raise ValueError(f"target {target!r} adds no tokens after prompt {prompt!r}")
    inputs, labels = ids[:-1], ids[1:]
    mask = [1 if j >= n_prompt - 1 else 0 for j in range(len(inputs))]
    return TeacherForced(inputs, labels, mask)


def token_accuracy(predicted: Sequence[int], labels: Sequence[int], mask: Sequence[int]) -> float:
    """Spec §2.2: share of masked positions where the argmax equals the label."""
    p, y, m = np.asarray(predicted), np.asarray(labels), np.asarray(mask, dtype=bool)
    if not m.any():
        raise ValueError("empty mask")
    return float((p[m] == y[m]).mean())


def locality_agreement(pre: Sequence[int], post: Sequence[int], mask: Sequence[int]) -> float:
    """Spec §2.3: share of masked positions where post-edit argmax equals pre-edit argmax."""
    return token_accuracy(post, pre, mask)


def ngram_entropy(tokens: Sequence[str], n: int) -> float:
    """Entropy (bits) of the n-gram frequency distribution of one token list."""
    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    total = sum(grams.values())
    if total == 0:
        return 0.0
    return -sum((c / total) * math.log2(c / total) for c in grams.values())


def word_tokenize(text: str) -> list[str]:
    """NLTK's word tokenizer; without the punkt data, NLTK's Treebank-style word splitter.

    ``nltk.word_tokenize`` first splits sentences with punkt (a data download); offline we
    apply the same per-sentence word tokenizer to the whole text, which differs only in
    how sentence-final periods inside the text are split.
    """
    try:
        from nltk import word_tokenize as nltk_word_tokenize

        return list(nltk_word_tokenize(text))
    except LookupError:
        from nltk.tokenize import NLTKWordTokenizer

        return list(NLTKWordTokenizer().tokenize(text))
    except ImportError:  # pragma: no cover - nltk is a dependency of the suite's env
        return re.findall(r"\w+|[^\w\s]", text)


def fluency_entropy(text: str) -> float:
    """Spec §2.4 for one text: ``(2/3·H2 + 4/3·H3) / 2`` (multiply means by 100 to report)."""
    tokens = word_tokenize(text)
    w2, w3 = FLUENCY_WEIGHTS
    return (w2 * ngram_entropy(tokens, 2) + w3 * ngram_entropy(tokens, 3)) / 2


def avg_score(efficacy: float, generality: float, locality: float) -> float:
    """Spec §2.5: ``((Eff + Gen) / 2 + Loc) / 2``."""
    return ((efficacy + generality) / 2 + locality) / 2


# --- black-box deviation (spec §7) -------------------------------------------------------

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans({c: " " for c in string.punctuation})


def normalize_answer(text: str) -> str:
    """Lowercase, NFKC, punctuation and articles removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def first_line(text: str) -> str:
    """The first non-empty line of a reply (spec §7: "parse first line")."""
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def exact_match(answer: str, gold: str) -> bool:
    """Normalised exact match (NM)."""
    return normalize_answer(answer) == normalize_answer(gold)


def token_f1(answer: str, gold: str) -> float:
    """Bag-of-words F1 between normalised answer and gold."""
    a, g = normalize_answer(answer).split(), normalize_answer(gold).split()
    common = sum((Counter(a) & Counter(g)).values())
    if not a or not g or common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(g)
    return 2 * precision * recall / (precision + recall)


def lenient_match(answer: str, gold: str) -> bool:
    """Gold as a whole-word substring of the answer, or token F1 >= 0.8."""
    a, g = normalize_answer(answer), normalize_answer(gold)
    if g and re.search(rf"(?<!\w){re.escape(g)}(?!\w)", a):
        return True
    return token_f1(answer, gold) >= 0.8
