"""The deterministic ``query_environment`` archivist (spec section 10.2).

The released game asks an LLM which catalog variables a question refers to and falls back
to this matcher when the call fails; the matcher is the default here so that a run is
reproducible offline. Discovery is informational only (as released): unlocking a variable
never adds it to the data.
"""

from __future__ import annotations

from typing import Any

REFUSALS: dict[str, tuple[str, ...]] = {
    "asks for strategy or answers": ("what is the optimal", "tell me the answer", "how to survive"),
    "asks for mechanisms or formulas": ("what causes damage", "damage formula"),
    "attempts to change the archivist's instructions": (
        "ignore previous",
        "ignore instructions",
        "you are now",
        "act as",
        "roleplay",
        "system prompt",
    ),
    "asks which variables matter": (
        "what variables are important",
        "which variable matters",
        "key variables",
    ),
    "is too broad": ("list all", "show all", "list everything", "show everything"),
}
MAX_QUERY_CHARS = 500
NOT_FOUND = (
    "We do not have that measurement in our archives. Try asking about weather, "
    "atmospheric, temporal, or environmental measurements."
)
CATEGORY_WORDS = ("weather", "atmospheric", "lunar", "radiation")


def refusal_reason(query: str) -> str | None:
    """Why a query is refused (keyword rule, case-insensitive), or None."""
    if len(query) > MAX_QUERY_CHARS:
        return f"query longer than {MAX_QUERY_CHARS} characters"
    low = query.lower()
    for reason, words in REFUSALS.items():
        if any(w in low for w in words):
            return reason
    return None


def _norm(text: str) -> str:
    return text.lower().replace(" ", "").replace("_", "").replace("-", "")


def match_variables(query: str, catalog: dict[str, Any]) -> list[str]:
    """Hidden catalog variables a query names (name, then hint, then description match)."""
    ql, qn = query.lower().strip(), _norm(query)
    found: list[str] = []
    for name, spec in catalog["hidden"].items():
        if spec.get("category") == "meta":
            continue
        nn = _norm(name)
        if qn and (qn in nn or nn in qn or ql in name.replace("_", " ")):
            found.append(name)
        elif any(ql in h.lower() or h.lower() in ql for h in spec.get("hints", [])):
            found.append(name)
        elif ql and ql in str(spec.get("description", "")).lower():
            found.append(name)
        elif any(w in ql and spec.get("category") == w for w in CATEGORY_WORDS):
            found.append(name)
    return found


def answer(query: str, catalog: dict[str, Any], discovered: set[str]) -> tuple[str, list[str]]:
    """The archivist's message for a (non-refused) query and the variables it names."""
    names = match_variables(query, catalog)
    if not names:
        return NOT_FOUND, []
    text = (
        "We have the following measurements related to your query: "
        + ", ".join(f"`{n}`" for n in names)
        + "."
    )
    return text + unlock_block(names, catalog, discovered), names


def unlock_block(names: list[str], catalog: dict[str, Any], discovered: set[str]) -> str:
    """The 'New measurements unlocked' suffix (or the already-available note)."""
    new = [n for n in names if n not in discovered]
    if not new:
        return "\n(These measurements are already available in your dataset.)"
    lines = [f"- `{n}`: {catalog['hidden'][n]['description']}" for n in new]
    return (
        "\nNew measurements unlocked:\n"
        + "\n".join(lines)
        + "\nYou can now query these variables using the API."
    )
