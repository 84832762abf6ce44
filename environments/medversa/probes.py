"""Two extra axes derived from the MedVersa records: portability and retention probes.

**Portability (one hop).** Does an edit carry to a question that needs the edited fact plus
one more step? For each record the probe asks for the *first letter* of the answer to the
edit question, ``"Question: <prompt>\\nThe first letter of the answer is"`` with target
``" O"`` for ``target_new = "Opiates"``. Answering needs the (new) answer, then one step on
it. Records whose old and new answers start with the same letter are skipped: the probe
could not tell an edited model from an unedited one there. Derived from ``prompt``,
``target_new`` and ``ground_truth`` alone, deterministic.

**Retention of general ability.** A small medical multiple-choice set built from the
records' *locality* questions, which are real (unedited) facts: the question, its recorded
answer and three distractors drawn (seeded) from other records' locality answers, same
locality subject first. Scored before editing and with a knowledge base of edits in place;
the change is what editing costs general medical QA. Options are deduplicated by
normalised text, so no item has two right answers by spelling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from environments.medversa.metrics import normalize_answer as normalize
from environments.medversa.schema import EditCase

LETTERS = ("A", "B", "C", "D")


@dataclass(frozen=True)
class OneHop:
    """A portability probe: teacher-forced (prompt, target) for one record."""

    case_id: str
    prompt: str
    target: str
    query: str  # what a retrieval editor sees (the probe prompt itself)


def _first_letter(text: str) -> str | None:
    for ch in text.strip():
        if ch.isalnum():
            return ch.upper()
    return None


def one_hop(case: EditCase) -> OneHop | None:
    """The first-letter probe of a record, or ``None`` when it cannot discriminate."""
    new, old = _first_letter(case.target_new), _first_letter(case.ground_truth)
    if new is None or new == old:
        return None
    prompt = f"Question: {case.prompt.strip()}\nThe first letter of the answer is"
    return OneHop(case.id, prompt, f" {new}", prompt)


@dataclass(frozen=True)
class MCQItem:
    """One multiple-choice item: ``options[answer]`` is the recorded answer."""

    id: str
    question: str
    options: tuple[str, ...]
    answer: int
    subject: str

    def prompt(self) -> str:
        """The text scored: question, lettered options, ``Answer:``."""
        lines = [f"Question: {self.question.strip()}"]
        lines += [f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options)]
        return "\n".join(lines) + "\nAnswer:"


def build_mcq(cases: Sequence[EditCase], n: int, seed: int = 0,
              n_options: int = 4) -> list[MCQItem]:
    """Up to ``n`` items from the first locality question of each record (file order after
    a ``default_rng(seed)`` shuffle); fewer when the records cannot supply distractors."""
    if not 2 <= n_options <= len(LETTERS):
        raise ValueError(f"n_options must be 2..{len(LETTERS)}")
    rng = np.random.default_rng(seed)
    pool: list[tuple[str, str, str, str]] = []  # (case id, question, answer, subject)
    for c in cases:
        q = c.locality[0]
        subject = str(c.meta.get("locality_subject_name", c.subject))
        pool.append((c.id, q.prompt, q.ground_truth.strip(), subject))
    items: list[MCQItem] = []
    for k in rng.permutation(len(pool)):
        if len(items) >= n:
            break
        cid, question, answer, subject = pool[int(k)]
        same = [p[2] for p in pool if p[3] == subject and p[0] != cid]
        other = [p[2] for p in pool if p[3] != subject]
        picked: list[str] = []
        seen = {normalize(answer)}
        for group in (same, other):
            for j in rng.permutation(len(group)):
                cand = group[int(j)]
                if normalize(cand) not in seen and len(picked) < n_options - 1:
                    picked.append(cand)
                    seen.add(normalize(cand))
        if len(picked) < n_options - 1:
            continue
        slot = int(rng.integers(0, n_options))
        options = picked[:slot] + [answer] + picked[slot:]
        items.append(MCQItem(f"mcq-{cid}", question, tuple(options), slot, subject))
    return items
