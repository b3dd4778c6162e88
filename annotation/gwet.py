"""Gwet's AC1 and AC2 agreement coefficients, and the κ-paradox warning beside κ — pure, no Django.

AC1 (unweighted) and AC2 (weighted, for ordinal scores) follow Gwet (2014), *Handbook of Inter-Rater
Reliability*, 4th ed., chapters 2–3 and 5, for any number of raters per unit with missing ratings — the
coefficient his irrCAC package computes as ``gwet.ac1.raw``. The Python port of irrCAC pins scipy 1.12 and
numpy < 2, which this project cannot take, so the formulas are written here from the book and tested against
irrCAC's published examples (annotation/tests/test_gwet_ac1.py).

With n units, r_i ratings on unit i, r_ik of them in category k, q categories and a q × q weight matrix w:

- weighted counts r*_ik = Σ_l w_kl r_il;
- observed agreement p_a = mean over the units with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1));
- category shares π_k = mean over the rated units (r_i ≥ 1) of r_ik / r_i;
- chance agreement p_e = (Σ_kl w_kl) / (q (q − 1)) · Σ_k π_k (1 − π_k);
- AC = (p_a − p_e) / (1 − p_e).

Identity weights give AC1. The weights are irrCAC's: "linear" 1 − |x_k − x_l| / (x_max − x_min), "quadratic"
1 − (x_k − x_l)² / (x_max − x_min)², "ordinal" 1 − C(|k − l| + 1, 2) / C(q, 2) on ranks, where x are the
category values when they are all numbers and their ranks otherwise. q counts the categories given (or, when
none are given, the ones used): an unused category still changes p_e, as in irrCAC's ``categ.labels``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from numbers import Real
from typing import Literal

import numpy as np

from annotation.agreement import REASON_NO_PAIRABLE_UNIT, AgreementResult, _is_missing, _object_matrix, _sort_key

AC2Weights = Literal["linear", "quadratic", "ordinal"] | None
WEIGHTS: tuple[str | None, ...] = (None, "linear", "quadratic", "ordinal")
DEFAULT_PREVALENCE_MARGIN = 0.2
REASON_ONE_CATEGORY_ONLY = "fewer than two categories, so chance agreement cannot be corrected for"


def weight_matrix(categories: Sequence, weights: AC2Weights = None) -> np.ndarray:
    """The q × q agreement weights for ``categories`` (in scale order): identity for AC1, else irrCAC's."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, got {weights!r}")
    q = len(categories)
    if weights is None or q < 2:
        return np.eye(q)
    numeric = all(isinstance(c, Real) and not isinstance(c, bool) for c in categories)
    x = np.asarray(categories, dtype=float) if numeric else np.arange(q, dtype=float)
    if weights == "ordinal":
        rank = np.arange(q)
        steps = np.abs(rank[:, None] - rank[None, :]) + 1
        pairs = steps * (steps - 1) / 2
        return 1.0 - pairs / pairs.max()
    spread = x.max() - x.min()
    distance = np.abs(x[:, None] - x[None, :]) / spread
    return 1.0 - (distance if weights == "linear" else distance**2)


def counts_table(ratings: object, categories: Sequence | None = None) -> tuple[np.ndarray, list]:
    """Units × categories counts from units × raters ratings (``None``/NaN missing), and the categories used.

    With ``categories`` given, a rating outside them is a ``ValueError``; otherwise the categories are the
    values seen, sorted.
    """
    matrix = _object_matrix(ratings, name="ratings (units × raters)")
    rows = [[v for v in row if not _is_missing(v)] for row in matrix]
    if categories is None:
        categories = sorted({v for row in rows for v in row}, key=_sort_key)
    column = {category: j for j, category in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)), dtype=float)
    for i, row in enumerate(rows):
        for value in row:
            if value not in column:
                raise ValueError(f"rating {value!r} is not among the categories")
            counts[i, column[value]] += 1
    return counts, list(categories)


def gwet_ac_from_counts(counts: np.ndarray, weights: np.ndarray) -> float:
    """AC from a units × categories count table (rows may be unrated) and a q × q weight matrix; NaN when
    undefined (no unit with two ratings, fewer than two categories, or p_e = 1). See the module docstring."""
    table = np.asarray(counts, dtype=float)
    r_i = table.sum(axis=1)
    rated = r_i >= 1
    pairable = r_i >= 2
    q = table.shape[1]
    if not pairable.any() or q < 2:
        return math.nan
    weighted = table @ weights.T
    t, ti = table[pairable], r_i[pairable]
    observed = float(((t * (weighted[pairable] - 1)).sum(axis=1) / (ti * (ti - 1))).mean())
    shares = (table[rated] / r_i[rated, None]).mean(axis=0)
    chance = float(weights.sum() / (q * (q - 1)) * (shares * (1 - shares)).sum())
    if chance >= 1.0:
        return math.nan
    return (observed - chance) / (1.0 - chance)


def gwet_ac(ratings: object, categories: Sequence | None = None, weights: AC2Weights = None) -> AgreementResult:
    """Gwet's AC1 (``weights=None``) or AC2 for ``ratings`` as units × raters, ``None``/NaN for missing.

    ``categories`` lists the scale in order; it is needed for AC2 on non-numeric values and decides q (see the
    module docstring). Undefined when no unit has two ratings or there are fewer than two categories.
    """
    statistic = "gwet_ac1" if weights is None else f"gwet_ac2_{weights}"
    counts, used = counts_table(ratings, categories)
    n_pairable = int((counts.sum(axis=1) >= 2).sum())
    if n_pairable == 0:
        return AgreementResult(statistic, None, 0, REASON_NO_PAIRABLE_UNIT)
    if len(used) < 2:
        return AgreementResult(statistic, None, n_pairable, REASON_ONE_CATEGORY_ONLY)
    value = gwet_ac_from_counts(counts, weight_matrix(used, weights))
    if not math.isfinite(value):
        return AgreementResult(statistic, None, n_pairable, REASON_ONE_CATEGORY_ONLY)
    return AgreementResult(statistic=statistic, value=value, n_units=n_pairable)


def class_shares(values: Iterable, categories: Sequence) -> dict:
    """Each category's share of ``values`` (the ratings κ and AC1 use), in the order given; {} when none."""
    counts = Counter(values)
    total = sum(counts.values())
    return {category: counts.get(category, 0) / total for category in categories} if total else {}


def shares_text(class_shares: dict) -> str:
    """The class shares in words, the most common first: "no 84%, yes 16%"."""
    ordered = sorted(class_shares.items(), key=lambda item: (-item[1], str(item[0])))
    return ", ".join(f"{label} {share:.0%}" for label, share in ordered)


def prevalence_warning(
    kappa: float | None, ac1: float | None, class_shares: dict, margin: float = DEFAULT_PREVALENCE_MARGIN
) -> str:
    """Words for a reader when κ and AC1 differ by more than ``margin`` ("" when they do not, or one is unknown).

    κ's chance agreement grows with the share of the most common class, so with a skewed prevalence κ can
    be low while raw agreement and AC1 are high (the κ paradox; Gwet 2008, British Journal of Mathematical and
    Statistical Psychology 61). ``class_shares`` maps each class to its share of the ratings.
    """
    if kappa is None or ac1 is None or not (math.isfinite(kappa) and math.isfinite(ac1)):
        return ""
    gap = ac1 - kappa
    if abs(gap) <= margin:
        return ""
    shares = shares_text(class_shares)
    higher, lower = ("AC1", "κ") if gap > 0 else ("κ", "AC1")
    return (
        f"κ = {kappa:.3f} and AC1 = {ac1:.3f} differ by {abs(gap):.3f}, more than {margin:.2f}: {higher} is the "
        f"higher. The class shares are {shares}; when one class dominates, κ's chance correction is large and "
        "κ can be low although the raters mostly agree (the κ paradox), so read both."
    )
