"""The judge's direction of error, pure: mean (judge − human consensus) with its interval, and tutors' rank agreement.

A judge can agree with the humans at κ 0.8 and still be uniformly harsher, or rank the tutors differently; κ does
not show either. This module measures both on the turns where judge and consensus gave a value on the scale (the
values are numbers: "not applicable" is left out before they come here):

- ``mean_difference``: the mean of judge − consensus over the turns (negative: the judge is harsher), with a
  percentile bootstrap interval over turns (B = 2,000 by default, 95 %), seeded from the content
  (`annotation.agreement_intervals.content_seed`), so the same turns always give the same interval.
- ``by_stratum``: the same per stratum (a tutor, or a condition), where strata exist.
- ``rank_agreement``: Kendall's τ (``scipy.stats.kendalltau``, τ-b) between the groups' (tutors' or conditions')
  mean judge score and their mean consensus score, with a percentile bootstrap interval over turns (each resample
  recomputes every group's two means and τ-b, vectorised; a resample that loses a group, or whose τ is undefined,
  is dropped and ``n_boot`` counts the kept ones). τ needs at least three groups; with fewer it is undefined.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
from scipy.stats import kendalltau

from annotation.agreement_intervals import content_seed

DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95
MIN_GROUPS = 3
UNITS = "turns where judge and consensus both gave a value on the scale"


def _interval(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    values = values[np.isfinite(values)]
    if not values.size:
        return None, None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def mean_difference(
    judge: Mapping[object, float],
    human: Mapping[object, float],
    *,
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict:
    """Mean (judge − human) over the items both have, with its percentile bootstrap interval over items."""
    items = sorted((i for i in human if judge.get(i) is not None and human[i] is not None), key=str)
    differences = np.array([float(judge[i]) - float(human[i]) for i in items])
    found = {
        "estimate": None,
        "low": None,
        "high": None,
        "confidence": confidence,
        "n": len(items),
        "n_boot": 0,
        "units": UNITS,
        "undefined_reason": "",
    }
    if not items:
        return {**found, "undefined_reason": "no turn has both a judge value and a consensus on the scale"}
    seed = content_seed("judge direction mean", differences, n_boot) if seed is None else seed
    rng = np.random.default_rng(seed)
    means = differences[rng.integers(0, len(items), size=(n_boot, len(items)))].mean(axis=1)
    low, high = _interval(means, confidence)
    return {**found, "estimate": float(differences.mean()), "low": low, "high": high, "n_boot": int(n_boot)}


def by_stratum(
    judge: Mapping[object, float],
    human: Mapping[object, float],
    strata: Mapping[object, str],
    *,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> list[dict]:
    """`mean_difference` per stratum (item → stratum name), in the strata's name order; items without a
    stratum are left out."""
    names = sorted({strata[i] for i in human if strata.get(i) not in (None, "")}, key=str)
    rows = []
    for name in names:
        items = [i for i in human if strata.get(i) == name]
        found = mean_difference(
            {i: judge.get(i) for i in items},
            {i: human[i] for i in items},
            n_boot=n_boot,
            confidence=confidence,
        )
        rows.append({"stratum": name, **found})
    return rows


def _group_means(values: np.ndarray, codes: np.ndarray, k: int, index: np.ndarray) -> np.ndarray:
    """Each resample's (rows of ``index``) mean of ``values`` per group code 0..k-1; NaN for an empty group."""
    size = index.shape[0]
    cells = codes[index] + (np.arange(size) * k)[:, None]
    sums = np.bincount(cells.ravel(), weights=values[index].ravel(), minlength=size * k).reshape(size, k)
    counts = np.bincount(cells.ravel(), minlength=size * k).reshape(size, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(counts > 0, sums / counts, np.nan)


def tau_b_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's τ-b of each row pair of ``a`` and ``b`` (B × k), at once: Σ sign(Δa)·sign(Δb) over the pairs
    of groups over √((pairs − ties in a)(pairs − ties in b)) — scipy's τ-b; NaN where a row has a NaN or is
    all ties."""
    upper = np.triu(np.ones((a.shape[1], a.shape[1]), dtype=bool), k=1)
    da = np.sign(a[:, :, None] - a[:, None, :])[:, upper]
    db = np.sign(b[:, :, None] - b[:, None, :])[:, upper]
    pairs = upper.sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = np.sqrt((pairs - (da == 0).sum(axis=1)) * (pairs - (db == 0).sum(axis=1)).astype(float))
        values = (da * db).sum(axis=1) / denominator
    return np.where(np.isfinite(values), np.round(values, 12), np.nan)  # √(n·n) need not give n exactly


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    if np.isnan(a).any() or np.isnan(b).any():
        return math.nan
    value = kendalltau(a, b).statistic
    return round(float(value), 12) if value is not None and math.isfinite(value) else math.nan


def rank_agreement(
    judge: Mapping[object, float],
    human: Mapping[object, float],
    groups: Mapping[object, str],
    *,
    grouping: str = "tutor",
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict:
    """Kendall's τ between the groups' mean judge score and mean consensus score (items → group name in
    ``groups``; ``grouping`` names what the groups are, e.g. "tutor"), with its bootstrap interval over items."""
    items = sorted(
        (i for i in human if judge.get(i) is not None and human[i] is not None and groups.get(i) not in (None, "")),
        key=str,
    )
    names = sorted({groups[i] for i in items}, key=str)
    found = {
        "grouping": grouping,
        "statistic": "kendall_tau_b",
        "estimate": None,
        "low": None,
        "high": None,
        "confidence": confidence,
        "n_groups": len(names),
        "n": len(items),
        "n_boot": 0,
        "groups": [],
        "units": f"{grouping}s, each by its mean over the {UNITS}",
        "undefined_reason": "",
    }
    if len(names) < MIN_GROUPS:
        reason = f"τ needs at least {MIN_GROUPS} {grouping}s with compared turns; there are {len(names)}"
        return {**found, "undefined_reason": reason}
    code = {name: c for c, name in enumerate(names)}
    codes = np.array([code[groups[i]] for i in items], dtype=np.int64)
    judged = np.array([float(judge[i]) for i in items])
    humans = np.array([float(human[i]) for i in items])
    every = np.arange(len(items))[None, :]
    judge_means = _group_means(judged, codes, len(names), every)[0]
    human_means = _group_means(humans, codes, len(names), every)[0]
    estimate = _tau(judge_means, human_means)
    table = [
        {"group": name, "judge_mean": float(judge_means[c]), "human_mean": float(human_means[c])}
        for name, c in code.items()
    ]
    if math.isnan(estimate):
        reason = "τ is undefined: the judge's or the humans' group means are all equal"
        return {**found, "groups": table, "undefined_reason": reason}
    seed = content_seed("judge direction tau", grouping, codes, judged, humans, n_boot) if seed is None else seed
    rng = np.random.default_rng(seed)
    values = np.empty(n_boot)
    block = max(1, 200_000 // len(items))
    for start in range(0, n_boot, block):
        index = rng.integers(0, len(items), size=(min(block, n_boot - start), len(items)))
        judge_b = _group_means(judged, codes, len(names), index)
        human_b = _group_means(humans, codes, len(names), index)
        values[start : start + index.shape[0]] = tau_b_rows(judge_b, human_b)
    kept = values[np.isfinite(values)]
    low, high = _interval(kept, confidence)
    return {**found, "estimate": estimate, "low": low, "high": high, "n_boot": int(kept.size), "groups": table}
