"""Design matrices, built by patsy on the distinct cells (and the balanced grid) only.

Why cells only: the design row is constant within a cell, so patsy never sees the raw rows.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import patsy

from harness.factorial.analysis.prepare import Prepared, Term


@dataclass
class Matrices:
    grid_codes: np.ndarray  # (n_grid, k) level indices
    grid_X: np.ndarray
    cell_X: np.ndarray
    slices: dict[Term, slice]  # () -> intercept
    colnames: list[str]


def build_matrices(prep: Prepared, terms: Sequence[Term]) -> Matrices:
    k = len(prep.names)
    fcols = [f"_f{i}" for i in range(k)]
    grid_codes = np.array(list(itertools.product(*(range(len(lv)) for lv in prep.levels))))
    grid = pd.DataFrame(
        {
            c: pd.Categorical([lv[j] for j in grid_codes[:, i]], categories=lv)
            for i, (c, lv) in enumerate(zip(fcols, prep.levels, strict=True))
        }
    )
    rhs = " + ".join(["1"] + [":".join(f"C(_f{i}, Sum)" for i in t) for t in terms])
    grid_dm = patsy.dmatrix(rhs, grid, return_type="dataframe")
    info = grid_dm.design_info
    cell_pd = pd.DataFrame(
        {
            c: pd.Categorical(prep.cells.get_column(c).to_list(), categories=lv)
            for c, lv in zip(fcols, prep.levels, strict=True)
        }
    )
    (cell_X,) = patsy.build_design_matrices([info], cell_pd)
    slices: dict[Term, slice] = {}
    for term, sl in info.term_slices.items():
        idx = tuple(sorted(int(f.code[len("C(_f") :].split(",")[0]) for f in term.factors))
        slices[idx] = sl

    def rename(col: str) -> str:
        return re.sub(r"C\(_f(\d+), Sum\)\[S\.", lambda m: f"{prep.names[int(m.group(1))]}[", col)

    return Matrices(
        grid_codes,
        np.asarray(grid_dm, dtype=float),
        np.asarray(cell_X, dtype=float),
        slices,
        [rename(c) for c in info.column_names],
    )


def columns(mats: Matrices, terms: Sequence[Term]) -> list[int]:
    cols = list(range(mats.slices[()].start, mats.slices[()].stop))
    for t in terms:
        cols += list(range(mats.slices[t].start, mats.slices[t].stop))
    return cols


def term_sets(terms: Sequence[Term], anova_type: int) -> dict[Term, tuple[list[Term], list[Term]]]:
    """(reduced, full) term lists whose comparison gives each term's SS."""
    out = {}
    for t in terms:
        if anova_type == 2:
            full = [u for u in terms if not (set(t) < set(u))]
        else:
            full = list(terms)
        out[t] = ([u for u in full if u != t], full)
    return out

