"""Token normalisation for search indexing: case-fold, strip accents, collapse repeats."""

import re
import unicodedata

_PUNCT = re.compile(r"[^\w\s-]")
_REPEAT = re.compile(r"(.)\1{2,}")


def _normalize(token):
    text = unicodedata.normalize("NFKD", token.casefold())
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _PUNCT.sub("", text)
    return _REPEAT.sub(r"\1\1", text).strip("-")


class Normalizer:
    """Normalises tokens; ``normalize_all`` maps a token stream."""

    def normalize(self, token):
        return _normalize(token)

    def normalize_all(self, tokens):
        return [self.normalize(t) for t in tokens]

    def term_counts(self, tokens):
        """{normalised term: occurrences} over a token stream."""
        counts = {}
        for t in tokens:
            term = self.normalize(t)
            counts[term] = counts.get(term, 0) + 1
        return counts
