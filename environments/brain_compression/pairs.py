"""Templated minimal pairs (BLiMP-style): a grammatical sentence and one that differs from
it in one marked place; a model passes a pair when it gives the grammatical one the higher
log-probability.

Four phenomena, two per level the paper's probing finds compression degrades:

* ``agreement`` (syntax): subject-verb number agreement across a prepositional attractor
  of the other number ("the key to the cabinets is" / "are");
* ``anaphor`` (syntax): a reflexive agreeing with its antecedent in number
  ("the boys hurt themselves" / "himself");
* ``determiner`` (morphology): demonstrative-noun number ("these books" / "this books");
* ``past_tense`` (morphology): irregular past forms ("ate" / "eated").

Seeded: the same seed gives the same pairs in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

PHENOMENA = ("agreement", "anaphor", "determiner", "past_tense")
NOUNS = (("key", "keys"), ("book", "books"), ("dog", "dogs"), ("teacher", "teachers"),
         ("car", "cars"), ("letter", "letters"), ("house", "houses"), ("box", "boxes"),
         ("girl", "girls"), ("table", "tables"))
PLACES = ("on the table", "in the garden", "near the door", "in the kitchen", "at school")
ATTRACTORS = (("cabinet", "cabinets"), ("window", "windows"), ("farmer", "farmers"),
              ("garden", "gardens"), ("student", "students"))
PEOPLE = (("boy", "boys", "himself"), ("girl", "girls", "herself"), ("man", "men", "himself"),
          ("woman", "women", "herself"), ("king", "kings", "himself"))
REFLEXIVE_VERBS = ("hurt", "saw", "praised", "blamed", "described")
IRREGULAR = (("ate", "eated"), ("went", "goed"), ("saw", "seed"), ("took", "taked"),
             ("gave", "gived"), ("wrote", "writed"), ("ran", "runned"), ("sang", "singed"))
PAST_TEMPLATES = ("yesterday the {p} {v} in the morning.", "last week my {p} {v} again.",
                  "the {p} {v} before dinner.")
PAST_OBJECTS = {"ate": "ate an apple", "went": "went home", "saw": "saw a bird",
                "took": "took the bus", "gave": "gave a gift", "wrote": "wrote a letter",
                "ran": "ran to the park", "sang": "sang a song"}


@dataclass(frozen=True)
class MinimalPair:
    """One pair: the grammatical and the ungrammatical sentence, and the phenomenon."""

    phenomenon: str
    good: str
    bad: str


def _agreement(rng: np.random.Generator) -> tuple[str, str]:
    noun = NOUNS[rng.integers(len(NOUNS))]
    attr = ATTRACTORS[rng.integers(len(ATTRACTORS))]
    plural = bool(rng.integers(2))
    subj = noun[1] if plural else noun[0]
    other = attr[0] if plural else attr[1]  # the attractor has the other number
    good, bad = ("are", "is") if plural else ("is", "are")
    place = PLACES[rng.integers(len(PLACES))]
    stem = f"the {subj} of the {other}"
    return f"{stem} {good} {place}.", f"{stem} {bad} {place}."


def _anaphor(rng: np.random.Generator) -> tuple[str, str]:
    sing, plur, refl = PEOPLE[rng.integers(len(PEOPLE))]
    verb = REFLEXIVE_VERBS[rng.integers(len(REFLEXIVE_VERBS))]
    if rng.integers(2):
        return f"the {plur} {verb} themselves.", f"the {plur} {verb} {refl}."
    return f"the {sing} {verb} {refl}.", f"the {sing} {verb} themselves."


def _determiner(rng: np.random.Generator) -> tuple[str, str]:
    noun = NOUNS[rng.integers(len(NOUNS))]
    place = PLACES[rng.integers(len(PLACES))]
    near = bool(rng.integers(2))
    sing_det, plur_det = ("this", "these") if near else ("that", "those")
    if rng.integers(2):
        return (f"i like {plur_det} {noun[1]} {place}.", f"i like {sing_det} {noun[1]} {place}.")
    return f"i like {sing_det} {noun[0]} {place}.", f"i like {plur_det} {noun[0]} {place}."


def _past_tense(rng: np.random.Generator) -> tuple[str, str]:
    right, wrong = IRREGULAR[rng.integers(len(IRREGULAR))]
    who = ("boy", "sister", "friend", "teacher")[rng.integers(4)]
    template = PAST_TEMPLATES[rng.integers(len(PAST_TEMPLATES))]
    phrase = PAST_OBJECTS[right]
    return (template.format(p=who, v=phrase),
            template.format(p=who, v=phrase.replace(right, wrong, 1)))


_MAKERS = {"agreement": _agreement, "anaphor": _anaphor, "determiner": _determiner,
           "past_tense": _past_tense}


def minimal_pairs(n_per_phenomenon: int = 32, seed: int = 0,
                  phenomena: tuple[str, ...] = PHENOMENA) -> list[MinimalPair]:
    """``n_per_phenomenon`` seeded pairs of each phenomenon (duplicates allowed)."""
    rng = np.random.default_rng(seed)
    out: list[MinimalPair] = []
    for name in phenomena:
        make = _MAKERS[name]
        for _ in range(n_per_phenomenon):
            good, bad = make(rng)
            out.append(MinimalPair(name, good, bad))
    return out
