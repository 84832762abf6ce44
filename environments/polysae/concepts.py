"""Templated compositional concepts, each with a control class that has the same words.

Why controls matched on co-occurrence: PolySAE's claim is that its interaction terms tell a
*composition* ("red cube": red bound to cube) from mere *co-occurrence* (red and cube in
one sentence, bound to other words). So every concept's positive sentences contain its two
constituents composed, and its negative sentences contain both constituents too, composed
with something else ("the red ball and the blue cube"); a probe that only sees which words
occur scores chance. Two kinds of concept:

* ``binding``: an attribute bound to an object (``red`` + ``cube``);
* ``compound``: a two-word compound (``fire`` + ``truck``) against the words apart
  (``the truck drove past the fire``).

Sentences come from a seeded generator; the same seed gives the same list, in order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COLOURS = ("red", "blue", "green", "yellow", "black", "white")
OBJECTS = ("cube", "ball", "box", "cup", "chair", "book")
PLACES = ("on the table", "in the room", "near the door", "by the window", "on the shelf")


@dataclass(frozen=True)
class Concept:
    """A composition of two constituents (``kind`` is ``binding`` or ``compound``)."""

    name: str
    kind: str
    first: str
    second: str


CONCEPTS: tuple[Concept, ...] = (
    Concept("red_cube", "binding", "red", "cube"),
    Concept("blue_ball", "binding", "blue", "ball"),
    Concept("green_box", "binding", "green", "box"),
    Concept("fire_truck", "compound", "fire", "truck"),
    Concept("ice_cream", "compound", "ice", "cream"),
    Concept("rain_coat", "compound", "rain", "coat"),
)
"""The probed concepts: three attribute-object bindings and three compounds."""

_SUBJECTS = ("she", "he", "the child", "my friend", "the man", "the woman")
_COMPOUND_POS = (
    "{subj} saw the {a} {b} {place}.",
    "{subj} talked about the {a} {b} all day.",
    "there was a {a} {b} {place}.",
    "{subj} liked the {a} {b} a lot.",
)
_COMPOUND_NEG = (
    "{subj} saw the {b} and the {a} {place}.",
    "{subj} talked about the {b}, then about the {a}.",
    "there was a {b} {place}, and a {a} too.",
    "the {b} was {place} while {subj} watched the {a}.",
)


@dataclass(frozen=True)
class ProbeSentence:
    """One sentence of a concept's probe: ``label`` 1 when the concept is composed."""

    concept: str
    label: int
    text: str


def _binding(concept: Concept, label: int, rng: np.random.Generator) -> str:
    colour, obj = concept.first, concept.second
    other_colour = str(rng.choice([c for c in COLOURS if c != colour]))
    other_obj = str(rng.choice([o for o in OBJECTS if o != obj]))
    if label:  # colour on obj, other colour on other obj
        pairs = [(colour, obj), (other_colour, other_obj)]
    else:  # the same four words, swapped bindings
        pairs = [(colour, other_obj), (other_colour, obj)]
    if rng.random() < 0.5:
        pairs.reverse()
    place = str(rng.choice(PLACES))
    return f"the {pairs[0][0]} {pairs[0][1]} and the {pairs[1][0]} {pairs[1][1]} were {place}."


def _compound(concept: Concept, label: int, rng: np.random.Generator) -> str:
    template = str(rng.choice(_COMPOUND_POS if label else _COMPOUND_NEG))
    return template.format(subj=str(rng.choice(_SUBJECTS)), a=concept.first, b=concept.second,
                           place=str(rng.choice(PLACES)))


def probe_sentences(n_per_class: int = 24, seed: int = 0,
                    concepts: tuple[Concept, ...] = CONCEPTS) -> list[ProbeSentence]:
    """``n_per_class`` composed and ``n_per_class`` control sentences per concept, seeded.

    Both classes of a concept contain both constituents (co-occurrence matched); in the
    binding concepts the two classes have the same word multiset, sentence for sentence.
    """
    rng = np.random.default_rng(seed)
    out: list[ProbeSentence] = []
    for concept in concepts:
        make = _binding if concept.kind == "binding" else _compound
        for label in (1, 0):
            out.extend(ProbeSentence(concept.name, label, make(concept, label, rng))
                       for _ in range(n_per_class))
    return out
