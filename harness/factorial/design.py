"""Factorial designs as data: a spec of factors and levels expands into cells.

A design is never a set of nested loops: like HELM's run expanders, a spec (factor ->
levels) is expanded into the Cartesian product (``full_factorial``), or into a regular
two-level fraction 2^(k-p) chosen by generators or by a requested resolution
(``fractional_factorial``). The fraction's defining relation is computed from its
generators (never typed), so the reported resolution and alias structure are derived
facts, not table look-ups. Replication (epochs, seeds) and blocking by item are a study's
(:mod:`harness.factorial.study`), not the design's.

Cell ids come from :func:`cell_id`, the one cell-id function of the suite: a hash of the
cell's factor levels (and, for a study's cell, its task, task args and replicate seed), so
a cell keeps its id when a design is subset or reordered; that is what lets a rerun resume
only missing cells.

Examples::

    full_factorial({"model": ["a", "b"], "prompt": ["p1", "p2", "p3"]})
    fractional_factorial(list("ABCDE"), resolution=5)      # 16 runs, E=ABCD, I=ABCDE
    fractional_factorial(list("ABCDEF"), generators=["E=ABC", "F=BCD"])
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

#: Letters naming two-level factors in words; "I" is the identity, as in the classic tables.
LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
#: Above this many factors the generator search is too large to be worth running.
MAX_SEARCH_FACTORS = 12


@dataclass(frozen=True)
class Cell:
    """One treatment combination: factor -> level, its stable id and coded row."""

    id: str
    levels: dict[str, Any]
    coded: tuple[int, ...]


@dataclass(frozen=True)
class Design:
    """An experimental design: factors, the cells to run and what is confounded.

    ``generators``, ``defining_relation``, ``resolution``, ``aliases`` and
    ``word_length_pattern`` are filled for two-level fractions (empty/None otherwise).
    ``letters`` maps factor names to the letters used in words (``A``, ``B``, ...).
    """

    factors: dict[str, tuple[Any, ...]]
    cells: tuple[Cell, ...]
    kind: str
    letters: dict[str, str] = field(default_factory=dict)
    generators: tuple[str, ...] = ()
    defining_relation: tuple[str, ...] = ()
    resolution: int | None = None
    aliases: dict[str, list[str]] = field(default_factory=dict)
    word_length_pattern: tuple[int, ...] = ()
    seed: int | None = None

    @property
    def n_cells(self) -> int:
        """Number of distinct treatment combinations."""
        return len(self.cells)

    def matrix(self) -> np.ndarray:
        """Coded matrix, one row per cell: two-level factors as -1/+1, others as level index."""
        return np.array([cell.coded for cell in self.cells], dtype=int).reshape(
            len(self.cells), len(self.factors)
        )

    def cell(self, cell_id: str) -> Cell:
        """Look a cell up by id (KeyError names the id)."""
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise KeyError(cell_id)

    def records(self) -> list[dict[str, Any]]:
        """Cells as flat records (``cell_id`` and one key per factor)."""
        return [{"cell_id": c.id, **c.levels} for c in self.cells]


# ---------------------------------------------------------------------------------------
# helpers


def cell_id(
    levels: Mapping[str, Any],
    *,
    task: str | None = None,
    task_args: Mapping[str, Any] | None = None,
    seed: int | None = None,
) -> str:
    """The stable id of a cell: ``c`` and 10 hex digits of a hash of what makes it.

    A design's cell is its factor levels; a study's cell is also its task, the task's fixed
    args and the replicate seed (:meth:`harness.factorial.study.Study.cells`). The hash is
    over a canonical JSON (keys sorted), so neither the order of the factors nor the cell's
    position in the design changes it; study logs record it as ``cell_id`` and a rerun
    finds the cells already done by it, so the formula must never change.
    """
    payload = json.dumps(
        {"task": task, "args": dict(task_args or {}), "levels": dict(levels), "seed": seed},
        sort_keys=True, default=str,
    )
    return "c" + hashlib.sha256(payload.encode()).hexdigest()[:10]


def _coded(levels: Mapping[str, Any], factors: Mapping[str, Sequence[Any]]) -> tuple[int, ...]:
    out = []
    for name, values in factors.items():
        index = list(values).index(levels[name])
        out.append((2 * index - 1) if len(values) == 2 else index)
    return tuple(out)


def _check_factors(factors: Mapping[str, Sequence[Any]]) -> dict[str, tuple[Any, ...]]:
    if not factors:
        raise ValueError("a design needs at least one factor")
    checked: dict[str, tuple[Any, ...]] = {}
    for name, levels in factors.items():
        values = tuple(levels)
        if not values:
            raise ValueError(f"factor {name!r} has no levels")
        if len(set(map(repr, values))) != len(values):
            raise ValueError(f"factor {name!r} has repeated levels: {list(values)}")
        checked[str(name)] = values
    return checked


def _make_cells(
    factors: dict[str, tuple[Any, ...]], rows: list[dict[str, Any]]
) -> tuple[Cell, ...]:
    return tuple(Cell(id=cell_id(row), levels=row, coded=_coded(row, factors)) for row in rows)


def full_factorial(factors: Mapping[str, Sequence[Any]]) -> Design:
    """Every combination of levels, in standard (Yates) order: the first factor varies fastest."""
    checked = _check_factors(factors)
    names = list(checked)
    # itertools.product varies its last argument fastest; reversing gives Yates order.
    combos = itertools.product(*(checked[n] for n in reversed(names)))
    rows = [dict(zip(reversed(names), combo, strict=True)) for combo in combos]
    rows = [{n: row[n] for n in names} for row in rows]
    letters = _letters(names) if all(len(v) == 2 for v in checked.values()) else {}
    return Design(factors=checked, cells=_make_cells(checked, rows), kind="full", letters=letters)


# ---------------------------------------------------------------------------------------
# two-level fractions: words are bit masks over factor positions


def _letters(names: Sequence[str]) -> dict[str, str]:
    """Letters for words: the names themselves when they are single letters, else A, B, ..."""
    if len(names) > len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} two-level factors are supported")
    if all(len(n) == 1 and n in LETTERS for n in names) and len(set(names)) == len(names):
        return {n: n for n in names}
    return {n: LETTERS[i] for i, n in enumerate(names)}


def _word(mask: int, alphabet: Sequence[str], sign: int = 1) -> str:
    body = "".join(alphabet[i] for i in range(len(alphabet)) if mask >> i & 1) or "I"
    return ("-" if sign < 0 else "") + body


def _parse_product(text: str, index: Mapping[str, int]) -> tuple[int, int]:
    """Parse ``-ABC`` / ``A*B*C`` / ``temp*prompt`` into (mask, sign)."""
    text = text.strip().replace(" ", "")
    sign = 1
    while text[:1] in "+-" and text:
        sign = -sign if text[0] == "-" else sign
        text = text[1:]
    tokens = re.split(r"[*·:]", text) if re.search(r"[*·:]", text) else list(text)
    mask = 0
    for token in tokens:
        if token not in index:
            raise ValueError(f"unknown factor {token!r} in {text!r}")
        mask ^= 1 << index[token]
    return mask, sign


def _group(words: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """All products of the generator words (the defining relation), without the identity."""
    group = [(0, 1)]
    for mask, sign in words:
        group += [(g ^ mask, s * sign) for g, s in group]
    return sorted(group[1:], key=lambda w: (bin(w[0]).count("1"), _rev_bits(w[0])))


def _rev_bits(mask: int) -> str:
    return bin(mask)[2:][::-1]


def _wlp(masks: Sequence[int], k: int) -> tuple[int, ...]:
    """Word length pattern (A3, A4, ..., Ak)."""
    counts = [0] * (k + 1)
    for m in masks:
        counts[bin(m).count("1")] += 1
    return tuple(counts[3:])


@lru_cache(maxsize=256)
def search_generators(k: int, p: int, min_resolution: int = 3) -> tuple[int, ...] | None:
    """Minimum-aberration 2^(k-p) design with resolution >= ``min_resolution``.

    Returns the generator columns as masks over the k-p base factors (None when no such
    design exists). Depth-first over combinations of interaction columns, pruning a branch
    as soon as a product word is shorter than the resolution, or its partial word length
    pattern is already lexicographically worse than the best design found (adding words
    can only add counts, so the pruning is exact). Ties keep the first design found.
    """
    m = k - p
    if p == 0:
        return ()
    if m < 1 or p > 2**m - 1 - m:
        return None
    need = max(2, min_resolution - 1)
    candidates = [c for c in range(1, 2**m) if bin(c).count("1") >= need]
    best: list[Any] = [None, None]  # (wlp, columns)

    def worse(partial: tuple[int, ...]) -> bool:
        return best[0] is not None and partial > best[0]

    def dfs(start: int, chosen: list[int], group: list[int]) -> None:
        depth = len(chosen)
        if depth == p:
            pattern = _wlp(group, k)
            if best[0] is None or pattern < best[0]:
                best[0], best[1] = pattern, tuple(chosen)
            return
        for i in range(start, len(candidates) - (p - depth - 1)):
            word = candidates[i] | (1 << (m + depth))
            new = [g ^ word for g in group] + [word]
            if any(bin(w).count("1") < min_resolution for w in new):
                continue
            grown = group + new
            if worse(_wlp(grown, k)):
                continue
            dfs(i + 1, chosen + [candidates[i]], grown)

    dfs(0, [], [])
    return best[1]


def _alias_table(
    group: Sequence[tuple[int, int]],
    k: int,
    alphabet: Sequence[str],
    key_order: int,
    alias_order: int | None,
) -> dict[str, list[str]]:
    table: dict[str, list[str]] = {}
    for order in range(1, key_order + 1):
        for combo in itertools.combinations(range(k), order):
            effect = sum(1 << i for i in combo)
            chain = sorted(
                ((effect ^ mask, sign) for mask, sign in group),
                key=lambda w: (bin(w[0]).count("1"), _rev_bits(w[0])),
            )
            table[_word(effect, alphabet)] = [
                _word(mask, alphabet, sign)
                for mask, sign in chain
                if alias_order is None or bin(mask).count("1") <= alias_order
            ]
    return table


def fractional_factorial(
    factors: Sequence[str] | Mapping[str, Sequence[Any]],
    generators: Sequence[str] | None = None,
    resolution: int | None = None,
    p: int | None = None,
    alias_key_order: int = 2,
    alias_order: int | None = None,
) -> Design:
    """A regular two-level fraction 2^(k-p).

    Give either ``generators`` (e.g. ``["E=ABCD"]``, ``"F=-ABC"``, or ``"temp=a*b"`` with
    factor names), or a requested ``resolution`` (the smallest fraction reaching it, with
    minimum aberration among those), or ``p`` (the minimum-aberration 1/2^p fraction).
    ``factors`` is a list of names (levels -1/+1) or a mapping name -> two levels (the first
    is coded -1). Aliases are listed for effects up to ``alias_key_order`` factors, showing
    aliased effects up to ``alias_order`` factors (None: the whole chain).
    """
    spec = (
        {str(n): tuple(v) for n, v in factors.items()}
        if isinstance(factors, Mapping)
        else {str(n): (-1, 1) for n in factors}
    )
    checked = _check_factors(spec)
    if any(len(v) != 2 for v in checked.values()):
        bad = [n for n, v in checked.items() if len(v) != 2]
        raise ValueError(f"fractional designs need two-level factors; not two levels: {bad}")
    names = list(checked)
    k = len(names)
    letters = _letters(names)
    index = {
        **{n: i for i, n in enumerate(names)},
        **{v: i for i, v in enumerate(letters.values())},
    }
    alphabet = [letters[n] for n in names]

    if generators:
        parsed = []
        for text in generators:
            if "=" not in text:
                raise ValueError(f"a generator reads like 'E=ABCD', got {text!r}")
            lhs, rhs = text.split("=", 1)
            lhs_mask, _ = _parse_product(lhs, index)
            if bin(lhs_mask).count("1") != 1:
                raise ValueError(f"generator {text!r} must define one factor")
            rhs_mask, sign = _parse_product(rhs, index)
            parsed.append((lhs_mask, rhs_mask, sign))
        generated = [g[0] for g in parsed]
        if len(set(generated)) != len(generated):
            raise ValueError("two generators define the same factor")
        gen_union = sum(generated)
        for _lhs, rhs_mask, _ in parsed:
            if rhs_mask & gen_union or rhs_mask == 0:
                raise ValueError("a generator must be a product of base (non-generated) factors")
        base = [i for i in range(k) if not gen_union >> i & 1]
        words = [(lhs | rhs, sign) for lhs, rhs, sign in parsed]
    else:
        if resolution is None and p is None:
            raise ValueError("give generators, a resolution or p")
        if k > MAX_SEARCH_FACTORS:
            raise ValueError(f"the generator search handles at most {MAX_SEARCH_FACTORS} factors")
        target = max(3, resolution or 3)
        tried = (
            [p] if p is not None else list(range(k - max(1, math.ceil(math.log2(k + 1))), -1, -1))
        )
        columns: tuple[int, ...] | None = None
        for p_try in tried:
            columns = search_generators(k, p_try, target)
            if columns is not None:
                break
        if columns is None:
            raise ValueError(f"no 2^({k}-{p}) design of resolution >= {target} exists")
        p_found = len(columns)
        m = k - p_found
        base = list(range(m))
        words = [(col | (1 << (m + j)), 1) for j, col in enumerate(columns)]
        parsed = [(1 << (m + j), col, 1) for j, col in enumerate(columns)]

    group = _group(words)
    masks = [w for w, _ in group]
    res = min((bin(w).count("1") for w in masks), default=None)
    if resolution is not None and res is not None and res < resolution:
        raise ValueError(f"the generators give resolution {res}, below the requested {resolution}")
    m = len(base)
    coded_rows = []
    for r in range(2**m):
        row = [0] * k
        for j, b in enumerate(base):
            row[b] = 1 if r >> j & 1 else -1
        for lhs_mask, rhs_mask, sign in parsed:
            value = sign
            for i in range(k):
                if rhs_mask >> i & 1:
                    value *= row[i]
            row[lhs_mask.bit_length() - 1] = value
        coded_rows.append(row)
    cells = tuple(
        Cell(
            id=cell_id(
                levels := {n: checked[n][(v + 1) // 2] for n, v in zip(names, row, strict=True)}
            ),
            levels=levels,
            coded=tuple(row),
        )
        for row in coded_rows
    )
    gen_text = tuple(
        f"{_word(lhs, alphabet)}={_word(rhs, alphabet, sign)}" for lhs, rhs, sign in parsed
    )
    return Design(
        factors=checked,
        cells=cells,
        kind="fractional" if parsed else "full",
        letters=letters,
        generators=gen_text,
        defining_relation=tuple(f"I={_word(mk, alphabet, s)}" for mk, s in group),
        resolution=res,
        aliases=_alias_table(group, k, alphabet, alias_key_order, alias_order),
        word_length_pattern=_wlp(masks, k),
    )


# ---------------------------------------------------------------------------------------
# subsets


def random_subset(design: Design, budget: int, seed: int) -> Design:
    """A seeded random subset of ``budget`` cells, kept in the design's order (ids unchanged)."""
    if budget < 1:
        raise ValueError("budget must be at least one cell")
    if budget >= design.n_cells:
        return replace(design, seed=seed)
    rng = np.random.default_rng(seed)
    keep = np.sort(rng.choice(design.n_cells, size=budget, replace=False))
    return replace(design, cells=tuple(design.cells[i] for i in keep), kind="subset", seed=seed)


# ---------------------------------------------------------------------------------------
# CLI boundary


def design_from_cli(
    factors: list[str],
    resolution: int | None = None,
    generators: list[str] | None = None,
    fraction: int | None = None,
) -> Design:
    """What ``harness study design --factors A,B,C --resolution 5`` builds.

    ``fraction`` is p, the number of generators (a 1/2^p fraction). With none of
    resolution, generators or fraction, the full two-level factorial.
    """
    names = [f.strip() for f in factors if f.strip()]
    if generators:
        design = fractional_factorial(names, generators=generators, resolution=resolution)
        if fraction is not None and len(design.generators) != fraction:
            raise ValueError(f"{len(design.generators)} generators given but fraction={fraction}")
        return design
    if resolution is not None or fraction is not None:
        return fractional_factorial(names, resolution=resolution, p=fraction)
    return full_factorial({n: [-1, 1] for n in names})


def design_json(design: Design) -> dict[str, Any]:
    """The CLI's JSON: runs, generators, defining relation, aliases and the coded matrix.

    The matrix has one row per run (one per cell); two-level factors are coded -1/+1,
    factors with more levels by level index.
    """
    matrix = [list(cell.coded) for cell in design.cells]
    return {
        "runs": len(matrix),
        "generators": list(design.generators),
        "defining_relation": list(design.defining_relation),
        "aliases": {k: list(v) for k, v in design.aliases.items()},
        "matrix": matrix,
    }


# ---------------------------------------------------------------------------------------
# planning: items for a target difference


def power_plan(
    diff: float,
    sd_diff: float | None = None,
    *,
    p_a: float = 0.5,
    p_b: float | None = None,
    epochs: int = 1,
    alpha: float = 0.05,
    power: float = 0.8,
    items: int | None = None,
) -> dict[str, Any]:
    """What ``harness study design --power`` prints: the items a paired comparison of two
    models needs to detect ``diff`` (and, given ``items``, the minimum detectable
    difference there).

    ``sd_diff`` is the SD of per-item differences (from a pilot: ``harness study report``
    gives it under ``power``); without it, 0/1 scores are assumed at ``p_a`` and
    ``p_b = p_a - diff`` with no correlation between the models, averaged over ``epochs``
    (conservative: models that fail the same items have a smaller SD).
    """
    from harness.stats import binary_sd_diff, items_needed, minimum_detectable_difference

    if diff == 0:
        raise ValueError("--diff must be non-zero")
    if sd_diff is None:
        pb = p_b if p_b is not None else min(max(p_a - abs(diff), 0.0), 1.0)
        sd = binary_sd_diff(p_a, pb, epochs=epochs)
        source = f"0/1 scores at p = {p_a:g} vs {pb:g}, uncorrelated, {epochs} epoch(s)"
    else:
        sd, source = sd_diff, "given"
    out: dict[str, Any] = {
        "diff": abs(diff), "sd_diff": sd, "sd_source": source, "alpha": alpha,
        "power": power, "items_needed": items_needed(abs(diff), sd, alpha=alpha, power=power),
    }
    if items is not None:
        out["items"] = items
        out["mdd"] = minimum_detectable_difference(items, sd, alpha=alpha, power=power)
    return out
