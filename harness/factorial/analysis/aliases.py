"""Aliasing in the fitted design: terms whose columns the observed cells cannot tell apart.

Why before fitting: in a fraction (or any design with missing cells) a term can be an
exact copy of another on the cells that were run (resolution III: ``A = B:C``). Fitting
both would report two estimates of one quantity, split arbitrarily by a pseudo-inverse.
Instead each such term joins the *alias chain* of the first term it copies (main effects
first): the model keeps one term per chain and every table names it by the chain
(``A:B = C:D``). A term that is only partly confounded (some but not all of its columns
lie in the span of others), or that copies a combination of several terms, makes the
model unestimable: that is an error naming the terms involved.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from harness.factorial.analysis.matrices import Matrices, columns
from harness.factorial.analysis.prepare import Term, term_name


def _rank(X: np.ndarray) -> int:
    return int(np.linalg.matrix_rank(X)) if X.size else 0


def alias_chains(
    mats: Matrices, terms: Sequence[Term], names: Sequence[str]
) -> tuple[list[Term], dict[Term, list[Term]]]:
    """The terms to fit and, for each kept term, the terms aliased with it (its chain).

    Raises:
        ValueError: A term is partly aliased, or aliased with a combination of terms, or
            with the intercept; the message names the chain.
    """
    X = mats.cell_X
    kept: list[Term] = []
    chains: dict[Term, list[Term]] = {}
    for t in terms:
        cols_t = columns(mats, [t])[len(columns(mats, [])):]
        before = columns(mats, kept)
        gain = _rank(X[:, before + cols_t]) - _rank(X[:, before])
        if gain == len(cols_t):
            kept.append(t)
            chains[t] = []
            continue
        label = term_name(t, names)
        if gain > 0:
            raise ValueError(
                f"the model is not estimable: {label} is partly aliased with "
                f"{', '.join(term_name(u, names) for u in kept) or 'the intercept'} on the "
                "cells that were run; drop the term (lower the order) or run more cells"
            )
        base = columns(mats, [])
        partner = None
        for u in kept:
            cols_u = columns(mats, [u])[len(base):]
            if len(cols_u) == len(cols_t) and _rank(X[:, base + cols_u + cols_t]) == _rank(
                X[:, base + cols_u]
            ):
                partner = u
                break
        if partner is None:
            where = _rank(X[:, base + cols_t]) == _rank(X[:, base])
            others = "the intercept" if where else "a combination of " + ", ".join(
                term_name(u, names) for u in kept)
            raise ValueError(
                f"the model is not estimable: {label} is aliased with {others} on the cells "
                "that were run; drop the term (lower the order) or run more cells"
            )
        chains[partner].append(t)
    return kept, chains


def chain_label(term: Term, chain: Sequence[Term], names: Sequence[str]) -> str:
    """``A:B = C:D``: the kept term first, then the terms aliased with it."""
    return " = ".join(term_name(u, names) for u in [term, *chain])
