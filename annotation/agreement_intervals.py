"""Bootstrap intervals for the agreement coefficients (α, Fleiss' κ, Cohen's κ, AC1/AC2) — pure, no Django.

Every interval resamples ITEMS (units) with replacement, B = 1,000 times by default, and takes the percentile
interval of the resampled coefficient (95 % by default). The point estimate is always the coefficient of
`annotation.agreement` (the `krippendorff` package, statsmodels, scikit-learn) or `annotation.gwet`, so an
interval and the number shown beside it cannot disagree. Percentile rather than BCa: BCa's acceleration needs
a jackknife (n more coefficients per interval) and is unstable when many resamples tie at the bounds of a
bounded coefficient; the coverage of the percentile interval is measured in
benchmarks/agreement_interval_coverage.py and recorded in benchmarks/RESULTS.md.

Resampling units, not pairable values: Hayes & Krippendorff (2007, Communication Methods and Measures 1)
resample pairable values for α; resampling units keeps each unit's ratings together (the dependence the data
have) and treats every coefficient alike. Their other idea is kept: ``p_below`` is the share of resampled α
below each minimum (0.667 and 0.800 by default), the probability that α falls short of it.

Seeds come from the content: `content_seed` hashes a canonical JSON of the data and the parameters (sha256,
never Python's ``hash()``, which changes between processes), so the same data always give the same interval
and a reader can recompute it. A resample on which the coefficient is undefined (one category only, no
pairable unit) is dropped; ``n_boot`` in the result counts the valid resamples. An undefined estimate gives
``low`` and ``high`` None (never NaN) and ``undefined_reason`` says why.

Each result is a dict: ``statistic``, ``estimate``, ``low``, ``high``, ``confidence``, ``n_boot``,
``units`` (items rated, items with two or more ratings, pairable values — α and κ count different things,
and a page says which), ``undefined_reason`` ("" when defined) and, for α only, ``p_below``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from numbers import Real

import numpy as np

from annotation.agreement import (
    LEVELS,
    _codes_for_categories,
    _is_missing,
    _numeric_or_none,
    _object_matrix,
    _sort_key,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
)
from annotation.agreement_units import rating_units
from annotation.gwet import counts_table, gwet_ac, weight_matrix

DEFAULT_RESAMPLES = 1000
DEFAULT_CONFIDENCE = 0.95
ALPHA_MINIMUMS = (0.667, 0.8)
"""Krippendorff's (2004) minimums: α ≥ 0.800 to rely on data, ≥ 0.667 for tentative conclusions."""
METHOD = "percentile bootstrap over items"


# --- seeds ------------------------------------------------------------------------------------------


def _canonical(value: object) -> object:
    """Plain JSON-able form: arrays and tuples to lists, numpy scalars to Python, missing to None."""
    if isinstance(value, np.ndarray):
        return [_canonical(v) for v in value.tolist()]
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    if isinstance(value, bool | int | float | str):
        return value
    return str(value)


def content_seed(*parts: object) -> int:
    """A 63-bit seed from the content of ``parts``: sha256 of their canonical JSON (stable across processes)."""
    text = json.dumps(_canonical(list(parts)), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big") >> 1


# --- the shared bootstrap ---------------------------------------------------------------------------


def _percentile_interval(values: np.ndarray, confidence: float) -> tuple[float | None, float | None]:
    if values.size == 0:
        return None, None
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return float(low), float(high)


WEIGHTS_BLOCK = 2_000_000
"""At most this many resample × unit weights in memory at once (16 MB)."""


def _bootstrap_weighted(
    statistic: Callable[[np.ndarray], np.ndarray], n_units: int, *, seed: int, n_boot: int
) -> np.ndarray:
    """The statistic on ``n_boot`` resamples of the units (finite values only). Resample b is
    ``rng.integers(0, n_units, size=n_units)``, the b-th draw from the seeded stream; the statistic takes a block of
    them at once as their weights (resamples × units: how often each unit was drawn) and returns one value per
    resample. Every coefficient here is a function of sums over units, so a resample's sums are the weighted sums."""
    rng = np.random.default_rng(seed)
    block = max(1, WEIGHTS_BLOCK // max(n_units, 1))
    parts = []
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        weights = np.stack(
            [np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units) for _ in range(size)]
        )
        parts.append(np.asarray(statistic(weights.astype(float)), dtype=float))
    values = np.concatenate(parts) if parts else np.empty(0)
    return values[np.isfinite(values)]


@np.errstate(divide="ignore", invalid="ignore")  # an undefined resample is NaN, dropped
def _weighted_mean(weights: np.ndarray, per_unit: np.ndarray, among: np.ndarray) -> np.ndarray:
    """Per resample, the weighted mean of ``per_unit`` (units × k) over the units in ``among``: resamples × k."""
    chosen = weights[:, among]
    return (chosen @ per_unit[among]) / chosen.sum(axis=1)[:, None]


def _result(
    statistic: str,
    estimate: float | None,
    reason: str | None,
    values: np.ndarray,
    confidence: float,
    units: dict,
) -> dict:
    low, high = _percentile_interval(values, confidence) if estimate is not None else (None, None)
    return {
        "statistic": statistic,
        "estimate": estimate,
        "low": low,
        "high": high,
        "confidence": confidence,
        "n_boot": int(values.size) if estimate is not None else 0,
        "method": METHOD,
        "units": units,
        "undefined_reason": reason or "",
    }


def _check(n_boot: int, confidence: float) -> None:
    if n_boot < 1:
        raise ValueError(f"n_boot must be at least 1, got {n_boot}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")


def _units_from_counts(per_unit: np.ndarray) -> dict:
    """Items rated, items with two or more ratings, and the ratings in those (the pairable values)."""
    return rating_units(per_unit.tolist())


# --- Krippendorff's alpha ---------------------------------------------------------------------------


def alpha_interval(
    data: object,
    level: str,
    *,
    value_domain: Sequence | None = None,
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    minimums: Sequence[float] = ALPHA_MINIMUMS,
) -> dict:
    """Krippendorff's α for ``data`` as raters × units (as `agreement.krippendorff_alpha` takes it), with its
    bootstrap interval over units and ``p_below`` = {minimum: share of resampled α below it}."""
    _check(n_boot, confidence)
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    point = krippendorff_alpha(data, level, value_domain=value_domain)
    matrix = _object_matrix(data, name="data (raters × units)")
    present = np.array([[not _is_missing(v) for v in row] for row in matrix], dtype=bool).reshape(matrix.shape)
    units = _units_from_counts(present.sum(axis=0))
    values = np.empty(0)
    if point.is_defined:
        numeric = _numeric_or_none(matrix, present)
        if numeric is None:
            numeric = _codes_for_categories(matrix, present, level, value_domain)
        domain = np.unique(numeric[present])
        # Units × values counts: resampling units is resampling rows, and the package takes counts directly.
        value_counts = np.stack([(numeric == v).sum(axis=0) for v in domain], axis=1).astype(float)
        keep = value_counts.sum(axis=1) >= 2  # units with fewer than two values add nothing to α
        value_counts = value_counts[keep]
        seed = content_seed("krippendorff_alpha", level, numeric, n_boot) if seed is None else seed

        values = _bootstrap_weighted(
            lambda weights: _alpha_of_resamples(value_counts, domain, level, weights),
            value_counts.shape[0],
            seed=seed,
            n_boot=n_boot,
        )
    result = _result(point.statistic, point.value, point.undefined_reason, values, confidence, units)
    result["p_below"] = {
        float(m): (float((values < m).mean()) if point.is_defined and values.size else None) for m in minimums
    }
    return result


@np.errstate(divide="ignore", invalid="ignore")  # an undefined resample is NaN, dropped
def _alpha_of_resamples(value_counts: np.ndarray, domain: np.ndarray, level: str, weights: np.ndarray) -> np.ndarray:
    """α of each resample (rows of ``weights``) from units × values counts (every unit with ≥ 2 values): the
    `krippendorff` package's own formula — coincidences o = Σ_u (n_u n_uᵀ − diag n_u) / (m_u − 1), expected
    e = (n nᵀ − diag n) / (N − 1), α = 1 − Σ o·d / Σ e·d — with each unit's coincidences weighted by how often the
    resample drew it. NaN where a resample has fewer than two values."""
    v = domain.size
    per_unit = value_counts[:, :, None] * value_counts[:, None, :] - value_counts[:, :, None] * np.eye(v)[None]
    per_unit /= (value_counts.sum(axis=1) - 1)[:, None, None]
    o = (weights @ per_unit.reshape(len(value_counts), v * v)).reshape(-1, v, v)
    n_v = o.sum(axis=1)
    e = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(v)[None]) / (n_v.sum(axis=1) - 1)[:, None, None]
    x = np.asarray(domain, dtype=float)
    if level == "nominal":
        d = np.broadcast_to(1.0 - np.eye(v), o.shape)
    elif level == "interval":
        d = np.broadcast_to((x[:, None] - x[None, :]) ** 2, o.shape)
    elif level == "ratio":
        total = x[:, None] + x[None, :]
        ratio = np.divide(x[:, None] - x[None, :], total, out=np.zeros((v, v)), where=total != 0)
        d = np.broadcast_to(ratio**2, o.shape)
    else:  # ordinal: the distance depends on the resample's own value counts
        cumulative = np.concatenate([np.zeros((n_v.shape[0], 1)), np.cumsum(n_v, axis=1)], axis=1)
        i = np.arange(v)
        low, high = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
        between = cumulative[:, high + 1] - cumulative[:, low]
        d = (between - (n_v[:, :, None] + n_v[:, None, :]) / 2) ** 2
    alpha = 1.0 - (o * d).sum(axis=(1, 2)) / (e * d).sum(axis=(1, 2))
    return np.where(np.count_nonzero(n_v, axis=1) >= 2, alpha, np.nan)


# --- Fleiss' kappa ----------------------------------------------------------------------------------


def fleiss_interval(
    ratings: object,
    *,
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict:
    """Fleiss' κ for ``ratings`` as units × raters (as `agreement.fleiss_kappa` takes it), with its interval."""
    _check(n_boot, confidence)
    point = fleiss_kappa(ratings)
    counts, categories = counts_table(ratings)
    per_unit = counts.sum(axis=1)
    units = _units_from_counts(per_unit)
    values = np.empty(0)
    if point.is_defined:
        table = counts[per_unit >= 1]
        seed = content_seed("fleiss_kappa", [[str(c) for c in categories]], table, n_boot) if seed is None else seed

        values = _bootstrap_weighted(
            lambda weights: _fleiss_of_resamples(table, weights), table.shape[0], seed=seed, n_boot=n_boot
        )
    return _result(point.statistic, point.value, point.undefined_reason, values, confidence, units)


@np.errstate(divide="ignore", invalid="ignore")  # an undefined resample is NaN, dropped
def _fleiss_of_resamples(table: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Fleiss' κ of each resample from a units × categories table (every unit rated): the formula of
    `annotation.agreement.fleiss_kappa_from_counts` with each unit weighted by how often the resample drew it."""
    n_i = table.sum(axis=1)
    pairable = n_i >= 2
    agreement = np.zeros(len(table))
    agreement[pairable] = (table[pairable] * (table[pairable] - 1)).sum(axis=1) / (n_i[pairable] * (n_i[pairable] - 1))
    observed = _weighted_mean(weights, agreement[:, None], pairable)[:, 0]
    shares = _weighted_mean(weights, table / n_i[:, None], np.ones(len(table), dtype=bool))
    chance = (shares**2).sum(axis=1)
    kappa = (observed - chance) / (1.0 - chance)
    categories = np.count_nonzero(weights @ table, axis=1)
    return np.where((categories >= 2) & (chance < 1.0), kappa, np.nan)


# --- Cohen's kappa ----------------------------------------------------------------------------------


def _kappa_from_tables(tables: np.ndarray, disagreement: np.ndarray) -> np.ndarray:
    """Cohen's κ of each q × q table in ``tables`` (B × q × q) with disagreement weights (0 on the diagonal):
    1 − Σ w·observed / Σ w·expected, expected from the margins — scikit-learn's formula, vectorised."""
    totals = tables.sum(axis=(1, 2))
    observed = tables / totals[:, None, None]
    expected = observed.sum(axis=2)[:, :, None] * observed.sum(axis=1)[:, None, :]
    numerator = (observed * disagreement).sum(axis=(1, 2))
    denominator = (expected * disagreement).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, 1.0 - numerator / denominator, np.nan)


def cohen_interval(
    pairs: Sequence[tuple[object, object, object]],
    scale: Sequence,
    *,
    weights: str | None = None,
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict:
    """Cohen's κ over ``pairs`` of (item, value_a, value_b) on ``scale`` (the values in order), with its interval.

    The point is `agreement.cohen_kappa` (scikit-learn); pairs with a missing side are dropped. The resampled κ
    come from the same formula on each resample's confusion table, computed at once for all resamples.
    """
    _check(n_boot, confidence)
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    scale = list(scale)
    kept = [(item, a, b) for item, a, b in pairs if not _is_missing(a) and not _is_missing(b)]
    point = cohen_kappa([a for _, a, _ in kept], [b for _, _, b in kept], weights, labels=scale)
    units = rating_units((not _is_missing(a)) + (not _is_missing(b)) for _, a, b in pairs)
    values = np.empty(0)
    if point.is_defined:
        rank = {value: i for i, value in enumerate(scale)}
        missing = [v for _, a, b in kept for v in (a, b) if v not in rank]
        if missing:
            raise ValueError(f"value {missing[0]!r} is not on the scale")
        q = len(scale)
        codes = np.array([rank[a] * q + rank[b] for _, a, b in kept], dtype=np.int64)
        steps = np.abs(np.arange(q)[:, None] - np.arange(q)[None, :]).astype(float)
        disagreement = {None: (steps > 0).astype(float), "linear": steps, "quadratic": steps**2}[weights]
        seed = content_seed("cohen_kappa", weights, [str(v) for v in scale], codes, n_boot) if seed is None else seed
        rng = np.random.default_rng(seed)
        n = codes.size
        block = max(1, 200_000 // max(n, 1))
        parts = []
        for start in range(0, n_boot, block):
            size = min(block, n_boot - start)
            drawn = codes[rng.integers(0, n, size=(size, n))]
            offsets = (np.arange(size) * q * q)[:, None]
            tables = np.bincount((drawn + offsets).ravel(), minlength=size * q * q).reshape(size, q, q)
            parts.append(_kappa_from_tables(tables.astype(float), disagreement))
        values = np.concatenate(parts)
        values = values[np.isfinite(values)]
    return _result(point.statistic, point.value, point.undefined_reason, values, confidence, units)


# --- Gwet's AC1 / AC2 -------------------------------------------------------------------------------


@np.errstate(divide="ignore", invalid="ignore")  # an undefined resample is NaN, dropped
def _ac_of_resamples(table: np.ndarray, w: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Gwet's AC of each resample from a units × categories table (every unit rated): the formula of
    `annotation.gwet.gwet_ac_from_counts` with each unit weighted by how often the resample drew it."""
    r_i = table.sum(axis=1)
    pairable = r_i >= 2
    q = table.shape[1]
    weighted = table @ w.T
    agreement = np.zeros(len(table))
    agreement[pairable] = (table[pairable] * (weighted[pairable] - 1)).sum(axis=1) / (
        r_i[pairable] * (r_i[pairable] - 1)
    )
    observed = _weighted_mean(weights, agreement[:, None], pairable)[:, 0]
    shares = _weighted_mean(weights, table / r_i[:, None], np.ones(len(table), dtype=bool))
    chance = w.sum() / (q * (q - 1)) * (shares * (1 - shares)).sum(axis=1)
    return np.where(chance < 1.0, (observed - chance) / (1.0 - chance), np.nan)


def ac1_interval(
    ratings: object,
    categories: Sequence,
    *,
    weights: str | None = None,
    seed: int | None = None,
    n_boot: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict:
    """Gwet's AC1 (or AC2 with ``weights`` "linear", "quadratic" or "ordinal") for ``ratings`` as units × raters
    on ``categories`` (the scale in order), with its interval; the point is `annotation.gwet.gwet_ac`."""
    _check(n_boot, confidence)
    categories = list(categories)
    point = gwet_ac(ratings, categories, weights)
    counts, _ = counts_table(ratings, categories)
    per_unit = counts.sum(axis=1)
    units = _units_from_counts(per_unit)
    values = np.empty(0)
    if point.is_defined:
        table = counts[per_unit >= 1]
        w = weight_matrix(categories, weights)
        labels = [c if isinstance(c, Real) else str(c) for c in sorted(categories, key=_sort_key)]
        seed = content_seed("gwet_ac", weights, labels, table, n_boot) if seed is None else seed
        values = _bootstrap_weighted(
            lambda weights: _ac_of_resamples(table, w, weights), table.shape[0], seed=seed, n_boot=n_boot
        )
    return _result(point.statistic, point.value, point.undefined_reason, values, confidence, units)
