"""Exact-integer scorer: the last integer in the answer must equal the gold value."""

import re

from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

_INT = re.compile(r"-?\d[\d,]*")


def extract_integer(text: str) -> int | None:
    """The final integer in ``text`` (thousands separators allowed), or None."""
    matches = _INT.findall(text or "")
    if not matches:
        return None
    try:
        return int(matches[-1].replace(",", ""))
    except ValueError:
        return None


@scorer(metrics=[accuracy(), stderr()])
def exact_integer() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion if state.output else ""
        value = extract_integer(completion)
        if value is None:
            return Score(value=INCORRECT, answer=completion[:200],
                         explanation="no integer in the answer")
        ok = value == int(target.text)
        return Score(value=CORRECT if ok else INCORRECT, answer=str(value),
                     explanation=f"answer {value}, gold {target.text}")

    return score
