"""Inter-rater agreement statistics for annotation projects — pure, importable from a notebook.

Krippendorff's α (via the `krippendorff` package), Fleiss' κ for equal and unequal numbers of raters per
item (statsmodels for the equal case), Cohen's κ (via scikit-learn) and percent agreement with gold labels.
No Django here: the report and the gate call these with plain arrays and lists.

Every function returns an `AgreementResult`. When a statistic is undefined for the data (only one
category was used, no unit has two ratings, the expected disagreement is zero) the result has
``value=None`` and ``undefined_reason`` says why — never a silent 1 or 0, never an exception. Malformed
input (wrong shape, unknown level, an unordered string scale for a weighted statistic) still raises
``ValueError``: that is a caller's mistake, not a property of the data.

Missing ratings are ``None`` or NaN everywhere. The "Unsure" answer is the string `UNSURE`; the agreement
statistics treat it as an ordinary category (drop it beforehand if a report wants it excluded), and
`gold_agreement` applies the stage's stated rule to it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from numbers import Real
from typing import Literal

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

UNSURE = "unsure"
"""The value an "Unsure" answer takes in plain data (labels, ratings, gold comparisons)."""

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
KappaWeights = Literal["linear", "quadratic"] | None
UnsureRule = Literal["strict", "exclude"]

REASON_NO_PAIRABLE_UNIT = "no unit has ratings from two or more raters"
REASON_ONE_CATEGORY = "only one category occurs in the pairable ratings, so chance disagreement is zero"
REASON_NOTHING_TO_COMPARE = "no item has both a label and a gold label to compare"


@dataclass(frozen=True)
class AgreementResult:
    """One agreement statistic, or the reason it is undefined.

    ``n_units`` counts the units that entered the computation: pairable units (≥ 2 ratings) for α and
    Fleiss' κ, rated pairs for Cohen's κ, compared items for gold agreement. ``coverage`` is only set by
    `gold_agreement`: the share of gold items that were counted.
    """

    statistic: str
    value: float | None
    n_units: int
    undefined_reason: str | None = None
    coverage: float | None = None

    def __post_init__(self) -> None:
        if (self.value is None) == (self.undefined_reason is None):
            raise ValueError("an AgreementResult has either a value or a reason it is undefined, not both")

    @property
    def is_defined(self) -> bool:
        return self.value is not None

    def as_dict(self) -> dict:
        return asdict(self)


def _undefined(statistic: str, reason: str, n_units: int, coverage: float | None = None) -> AgreementResult:
    return AgreementResult(statistic=statistic, value=None, n_units=n_units, undefined_reason=reason, coverage=coverage)


def _is_missing(value: object) -> bool:
    # NaN is the only value not equal to itself; this also catches numpy float NaNs of any width.
    return value is None or value != value


def _object_matrix(data: object, *, name: str) -> np.ndarray:
    matrix = np.asarray(data, dtype=object)
    if matrix.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional, got shape {matrix.shape}")
    return matrix


# --- Krippendorff's alpha ---------------------------------------------------------------------------


def krippendorff_alpha(data: object, level: Level, *, value_domain: Sequence | None = None) -> AgreementResult:
    """Krippendorff's α for ``data`` as raters × units (the `krippendorff` package's convention).

    Values may be numbers or strings; ``None``/NaN is a missing rating. Strings are fine for the nominal
    level; for ordinal they need ``value_domain`` listing the scale in order; interval and ratio need
    numbers. Undefined when no unit has two ratings or when the pairable ratings use one value only.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    statistic = f"krippendorff_alpha_{level}"
    matrix = _object_matrix(data, name="data (raters × units)")
    present = np.array([[not _is_missing(v) for v in row] for row in matrix], dtype=bool).reshape(matrix.shape)

    pairable_units = present.sum(axis=0) >= 2
    n_pairable = int(pairable_units.sum())
    if n_pairable == 0:
        return _undefined(statistic, REASON_NO_PAIRABLE_UNIT, 0)
    # Only values in pairable units enter α; a second value seen in a single-rated unit does not help.
    pairable_values = {v for v in matrix[:, pairable_units][present[:, pairable_units]]}
    if len(pairable_values) < 2:
        return _undefined(statistic, REASON_ONE_CATEGORY, n_pairable)

    numeric = _numeric_or_none(matrix, present)
    if numeric is None:
        numeric = _codes_for_categories(matrix, present, level, value_domain)
    value = float(krippendorff.alpha(reliability_data=numeric, level_of_measurement=level))
    if not math.isfinite(value):  # safety net: the package divides by the expected disagreement
        return _undefined(statistic, REASON_ONE_CATEGORY, n_pairable)
    return AgreementResult(statistic=statistic, value=value, n_units=n_pairable)


def _numeric_or_none(matrix: np.ndarray, present: np.ndarray) -> np.ndarray | None:
    """The data as floats with NaN for missing, or None when some value is not a number."""
    values = matrix[present]
    if not all(isinstance(v, Real) and not isinstance(v, bool) for v in values):
        return None
    numeric = np.full(matrix.shape, np.nan)
    numeric[present] = values.astype(float)
    return numeric


def _codes_for_categories(
    matrix: np.ndarray, present: np.ndarray, level: str, value_domain: Sequence | None
) -> np.ndarray:
    """Map category values to their rank in the scale, so the package sees numbers.

    Nominal distances ignore the codes; ordinal distances depend only on the order and the counts of
    values, so ranks in ``value_domain`` give the same α as the values themselves.
    """
    if level in ("interval", "ratio"):
        raise ValueError(f"{level} α needs numeric ratings")
    if value_domain is None:
        if level != "nominal":
            raise ValueError("ordinal α on non-numeric ratings needs value_domain, the scale in order")
        value_domain = sorted({str(v) for v in matrix[present]})
        rank = {v: i for i, v in enumerate(value_domain)}
        key = str
    else:
        rank = {v: i for i, v in enumerate(value_domain)}
        key = _identity
    codes = np.full(matrix.shape, np.nan)
    for index in zip(*np.nonzero(present), strict=True):
        value = key(matrix[index])
        if value not in rank:
            raise ValueError(f"rating {value!r} is not in value_domain")
        codes[index] = rank[value]
    return codes


def _identity(value: object) -> object:
    return value


# --- Fleiss' kappa ----------------------------------------------------------------------------------


def fleiss_kappa(ratings: object) -> AgreementResult:
    """Fleiss' κ for ``ratings`` as units × raters (``None``/NaN for missing), any number of raters per unit.

    Raters are interchangeable: column j need not be the same person on every row. With the same number
    of ratings on every rated unit this is Fleiss (1971), computed by statsmodels. Otherwise it is the
    generalisation to unequal raters per unit given by Gwet (2014), *Handbook of Inter-Rater Reliability*,
    4th ed., and implemented as ``fleiss.kappa.raw`` in his irrCAC R package; see `fleiss_kappa_from_counts`.
    """
    matrix = _object_matrix(ratings, name="ratings (units × raters)")
    rows = [[v for v in row if not _is_missing(v)] for row in matrix]
    categories = sorted({v for row in rows for v in row}, key=_sort_key)
    column = {category: j for j, category in enumerate(categories)}
    counts = np.zeros((len(rows), len(categories)), dtype=int)
    for i, row in enumerate(rows):
        for value in row:
            counts[i, column[value]] += 1
    return fleiss_kappa_from_counts(counts)


def _sort_key(value: object) -> tuple[str, object]:
    # Mixed types (e.g. 1 and "unsure") cannot be compared directly; the order of columns is irrelevant
    # to κ, it only needs to be deterministic.
    return (type(value).__name__, value)


def fleiss_kappa_from_counts(counts: object) -> AgreementResult:
    """Fleiss' κ from a units × categories table of how many raters chose each category for each unit.

    Units with no rating are ignored. With n_i ratings on unit i, n_ij of them in category j:

    - observed agreement: P_i = Σ_j n_ij (n_ij − 1) / (n_i (n_i − 1)), averaged over the units with
      n_i ≥ 2 (a single rating cannot agree or disagree);
    - category shares: p_j = mean over the rated units (n_i ≥ 1) of n_ij / n_i;
    - chance agreement: P_e = Σ_j p_j²;  κ = (P̄ − P_e) / (1 − P_e).

    This is Gwet's (2014) generalisation, irrCAC's ``fleiss.kappa.raw``. When every rated unit has the
    same n_i it reduces exactly to Fleiss (1971), and then statsmodels computes it.
    """
    statistic = "fleiss_kappa"
    table = np.asarray(counts, dtype=float)
    if table.ndim != 2:
        raise ValueError(f"counts must be units × categories, got shape {table.shape}")
    if (table < 0).any():
        raise ValueError("counts cannot be negative")
    ratings_per_unit = table.sum(axis=1)
    table = table[ratings_per_unit > 0]
    ratings_per_unit = ratings_per_unit[ratings_per_unit > 0]

    pairable = ratings_per_unit >= 2
    n_pairable = int(pairable.sum())
    if n_pairable == 0:
        return _undefined(statistic, REASON_NO_PAIRABLE_UNIT, 0)
    if np.count_nonzero(table.sum(axis=0)) < 2:
        return _undefined(statistic, REASON_ONE_CATEGORY, n_pairable)

    if np.all(ratings_per_unit == ratings_per_unit[0]):
        value = float(statsmodels_fleiss_kappa(table, method="fleiss"))
    else:
        value = _fleiss_kappa_unequal(table)
    if not math.isfinite(value):
        return _undefined(statistic, REASON_ONE_CATEGORY, n_pairable)
    return AgreementResult(statistic=statistic, value=value, n_units=n_pairable)


def _fleiss_kappa_unequal(table: np.ndarray) -> float:
    """Gwet's generalisation (see `fleiss_kappa_from_counts`) on a table whose rows all have ≥ 1 rating."""
    n_i = table.sum(axis=1)
    pairable = n_i >= 2
    agreement_per_unit = (table[pairable] * (table[pairable] - 1)).sum(axis=1) / (n_i[pairable] * (n_i[pairable] - 1))
    observed = agreement_per_unit.mean()
    category_shares = (table / n_i[:, None]).mean(axis=0)
    chance = float((category_shares**2).sum())
    if chance >= 1.0:
        return math.nan
    return float((observed - chance) / (1.0 - chance))


# --- Cohen's kappa ----------------------------------------------------------------------------------


def cohen_kappa(
    a: Sequence, b: Sequence, weights: KappaWeights = None, *, labels: Sequence | None = None
) -> AgreementResult:
    """Cohen's κ between two raters (e.g. the judge and the human consensus), via scikit-learn.

    Pairs where either side is missing are dropped. ``weights`` is None (unweighted), "linear" or
    "quadratic"; weighted κ needs an order, so non-numeric values need ``labels`` listing the scale in
    order (sklearn would otherwise sort strings alphabetically).
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    if len(a) != len(b):
        raise ValueError(f"a and b must have the same length, got {len(a)} and {len(b)}")
    statistic = "cohen_kappa" if weights is None else f"cohen_kappa_{weights}"
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if not _is_missing(x) and not _is_missing(y)]
    if not pairs:
        return _undefined(statistic, "no unit was rated by both raters", 0)
    left, right = [x for x, _ in pairs], [y for _, y in pairs]
    if len(set(left) | set(right)) < 2:
        return _undefined(statistic, REASON_ONE_CATEGORY, len(pairs))
    if weights is not None and labels is None and not all(isinstance(v, Real) for v in left + right):
        raise ValueError("weighted κ on non-numeric values needs labels, the scale in order")
    value = float(cohen_kappa_score(left, right, labels=labels, weights=weights))
    if not math.isfinite(value):
        return _undefined(statistic, REASON_ONE_CATEGORY, len(pairs))
    return AgreementResult(statistic=statistic, value=value, n_units=len(pairs))


# --- Agreement with gold ----------------------------------------------------------------------------


def gold_agreement(
    labels: Sequence[Hashable], gold: Sequence[Hashable], unsure: UnsureRule = "strict", *, unsure_value: str = UNSURE
) -> AgreementResult:
    """Share of gold items an annotator labelled like the gold label, with the rule for "Unsure" stated.

    ``labels[i]`` is the annotator's answer to the item whose gold label is ``gold[i]``; ``None``/NaN means
    not answered. Unanswered items are never counted. An "Unsure" answer is a miss under ``"strict"`` and
    is left out under ``"exclude"``. ``coverage`` = counted items / gold items, so an exclusion is visible.
    Undefined when nothing was counted.
    """
    if unsure not in ("strict", "exclude"):
        raise ValueError(f"unsure must be 'strict' or 'exclude', got {unsure!r}")
    if len(labels) != len(gold):
        raise ValueError(f"labels and gold must have the same length, got {len(labels)} and {len(gold)}")
    if any(_is_missing(g) for g in gold):
        raise ValueError("every gold item needs a gold label")
    statistic = f"gold_agreement_{unsure}"
    counted = matches = 0
    for label, gold_label in zip(labels, gold, strict=True):
        if _is_missing(label) or (label == unsure_value and unsure == "exclude"):
            continue
        counted += 1
        # Under "strict" an Unsure answer is a miss, whatever the gold label says.
        matches += label != unsure_value and label == gold_label
    coverage = counted / len(gold) if gold else None
    if counted == 0:
        return _undefined(statistic, REASON_NOTHING_TO_COMPARE, 0, coverage=coverage)
    return AgreementResult(statistic=statistic, value=matches / counted, n_units=counted, coverage=coverage)
