"""The pilot sampler (pure): a stage's pilot drawn evenly across categories × subjects from its gold items.

The spread follows SafeTutors Appendix D: 30 items, or 15 for the crowd stage, "drawn evenly across categories and
subjects"; the sampler says plainly when the items on hand cannot support an even spread.

"Even" is three promises at once: every (category, subject) cell gets ⌊n/K⌋ or ⌈n/K⌉ items (K cells), every
category gets ⌊n/C⌋ or ⌈n/C⌉, and every subject ⌊n/S⌋ or ⌈n/S⌉. Which cells take the one extra item is a
small integer programme (a balanced 0/1 matrix on the cells that have an item to spare); scipy's `milp`
solves it, with seeded random weights so the choice is reproducible but not always the first cells.
When no even spread exists, a best-effort sample (as close to even as the pool allows) is returned,
marked ``even=False`` with the reasons, so a caller can refuse it or accept it knowingly.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

MARGIN_WEIGHT = 4.0


@dataclass(frozen=True)
class PoolItem:
    id: int
    category: str
    subject: str


@dataclass(frozen=True)
class PilotSample:
    item_ids: list[int]
    even: bool
    problems: list[str] = field(default_factory=list)
    cell_counts: dict[tuple[str, str], int] = field(default_factory=dict)
    category_counts: dict[str, int] = field(default_factory=dict)
    subject_counts: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "item_ids": list(self.item_ids),
            "even": self.even,
            "problems": list(self.problems),
            "cells": [{"category": c, "subject": s, "count": n} for (c, s), n in sorted(self.cell_counts.items())],
            "category_counts": dict(self.category_counts),
            "subject_counts": dict(self.subject_counts),
        }


def sample_pilot(
    pool: Sequence[PoolItem],
    size: int,
    *,
    categories: Sequence[str] | None = None,
    subjects: Sequence[str] | None = None,
    seed: int = 0,
) -> PilotSample:
    """Draw ``size`` items evenly across ``categories`` × ``subjects`` (default: those in the pool)."""
    if size < 1:
        raise ValueError("a pilot needs at least one item")
    categories = list(dict.fromkeys(categories)) if categories else sorted({p.category for p in pool})
    subjects = list(dict.fromkeys(subjects)) if subjects else sorted({p.subject for p in pool})
    cells = [(c, s) for c in categories for s in subjects]
    by_cell: dict[tuple[str, str], list[int]] = defaultdict(list)
    for item in sorted(pool, key=lambda p: p.id):
        by_cell[(item.category, item.subject)].append(item.id)
    capacity = np.array([len(by_cell[cell]) for cell in cells])
    rng = np.random.default_rng(seed)

    problems = _even_spread_problems(cells, capacity, size)
    counts = None if problems else _solve(cells, categories, subjects, capacity, size, rng, even=True)
    if counts is None:
        if not problems:
            problems.append("the cells with an item to spare cannot balance categories and subjects at the same time")
        counts = _solve(cells, categories, subjects, capacity, min(size, int(capacity.sum())), rng, even=False)
    item_ids: list[int] = []
    for cell, count in zip(cells, counts, strict=True):
        if count:
            chosen = rng.choice(by_cell[cell], size=int(count), replace=False)
            item_ids.extend(int(i) for i in chosen)
    cell_counts = {cell: int(n) for cell, n in zip(cells, counts, strict=True)}
    category_counts, subject_counts = Counter(), Counter()
    for (c, s), n in cell_counts.items():
        category_counts[c] += n
        subject_counts[s] += n
    return PilotSample(
        item_ids=sorted(item_ids),
        even=not problems,
        problems=problems,
        cell_counts=cell_counts,
        category_counts={c: category_counts[c] for c in categories},
        subject_counts={s: subject_counts[s] for s in subjects},
    )


def _even_spread_problems(cells: list[tuple[str, str]], capacity: np.ndarray, size: int) -> list[str]:
    """Reasons an even spread is impossible that can be named cell by cell."""
    problems = []
    if capacity.sum() < size:
        problems.append(f"only {int(capacity.sum())} eligible items for a pilot of {size}")
    floor_per_cell = size // len(cells)
    for cell, available in zip(cells, capacity, strict=True):
        if available < floor_per_cell:
            problems.append(
                f"{cell[0]} × {cell[1]} has {int(available)} item(s); an even spread needs at least {floor_per_cell}"
            )
    return problems


def _solve(cells, categories, subjects, capacity, size, rng, *, even: bool) -> np.ndarray | None:
    """Counts per cell. Even: the exact balanced solution or None. Not even: the closest to even."""
    n_cells = len(cells)
    row_of = np.array([categories.index(c) for c, _ in cells])
    col_of = np.array([subjects.index(s) for _, s in cells])
    rows = np.zeros((len(categories), n_cells))
    rows[row_of, np.arange(n_cells)] = 1
    cols = np.zeros((len(subjects), n_cells))
    cols[col_of, np.arange(n_cells)] = 1
    total = np.ones((1, n_cells))
    if even:
        per_cell = size // n_cells
        lower = np.full(n_cells, per_cell, dtype=float)
        upper = np.minimum(per_cell + 1, capacity).astype(float)
        constraints = [
            LinearConstraint(total, size, size),
            LinearConstraint(rows, math.floor(size / len(categories)), math.ceil(size / len(categories))),
            LinearConstraint(cols, math.floor(size / len(subjects)), math.ceil(size / len(subjects))),
        ]
        result = milp(
            c=rng.random(n_cells),  # random tie-breaking among the balanced solutions, reproducible by seed
            constraints=constraints,
            integrality=np.ones(n_cells),
            bounds=Bounds(lower, upper),
        )
        return np.rint(result.x).astype(int) if result.success else None

    # Best effort: x per cell plus one absolute-deviation variable per cell, category and subject,
    # minimising the total distance from the even targets while taking exactly `size` items. The
    # category and subject balance the paper states weighs more than the balance of single cells.
    groups = [
        (np.eye(n_cells), size / n_cells, 1.0),
        (rows, size / len(categories), MARGIN_WEIGHT),
        (cols, size / len(subjects), MARGIN_WEIGHT),
    ]
    n_dev = sum(g.shape[0] for g, _, _ in groups)
    n_vars = n_cells + n_dev
    blocks, lower_bounds, upper_bounds = [], [], []
    weights = []
    offset = n_cells
    for matrix, target, weight in groups:
        k = matrix.shape[0]
        dev = np.zeros((k, n_dev))
        dev[:, offset - n_cells : offset - n_cells + k] = np.eye(k)
        # d ≥ Σx − t  and  d ≥ t − Σx
        blocks.append(np.hstack([matrix, -dev]))
        upper_bounds.append(np.full(k, target))
        lower_bounds.append(np.full(k, -np.inf))
        blocks.append(np.hstack([-matrix, -dev]))
        upper_bounds.append(np.full(k, -target))
        lower_bounds.append(np.full(k, -np.inf))
        weights.append(np.full(k, weight))
        offset += k
    blocks.append(np.hstack([total, np.zeros((1, n_dev))]))
    lower_bounds.append(np.array([size]))
    upper_bounds.append(np.array([size]))
    objective = np.concatenate([rng.random(n_cells) * 1e-3, *weights])
    result = milp(
        c=objective,
        constraints=[LinearConstraint(np.vstack(blocks), np.concatenate(lower_bounds), np.concatenate(upper_bounds))],
        integrality=np.concatenate([np.ones(n_cells), np.zeros(n_dev)]),
        bounds=Bounds(np.zeros(n_vars), np.concatenate([capacity.astype(float), np.full(n_dev, np.inf)])),
    )
    if not result.success:  # cannot happen when size ≤ capacity.sum(); keep the caller's contract anyway
        return np.zeros(n_cells, dtype=int)
    return np.rint(result.x[:n_cells]).astype(int)
