"""The paired percentile bootstrap of a contrast, bit-identical to scipy.stats.bootstrap with the same seed."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields

import numpy as np
from scipy import special, stats

# scipy's compiled CSR routines, called directly: csr_todense counts each resample's draws and csr_matvecs
# sums those counts per tie group, writing into preallocated arrays with no scipy.sparse matrix built per
# chunk. They are a private API (it may change with a scipy release; test_fairness_reference.py would
# show it), so this is the one module that imports them.
from scipy.sparse import _sparsetools

from audits.analysis_parameters import AnalysisParameters
from audits.exact_signed_rank import EXACT_MAX_NONZERO, signed_rank_exact_p
from audits.fairness.resample_indices import WORDS_CHUNK, bootstrap_indices, index_words, map_words
from audits.fairness.signed_rank import (
    _EXACT_LIMIT,
    PairedEffect,
    _effect_columns,
    _EncodedDifferences,
    _GroupIndicator,
    _kernel_dtype,
    _RankColumns,
    _signed_rank_from_counts,
)
from audits.violation_rules import is_violation

# Resamples are drawn, counted and put through the first pass this many at a time: the pass's matrices
# then stay in the CPU's cache (the kernel is memory-bound otherwise).
_COLUMN_CHUNK = 256


class _Resamples:
    """The resamples of ``bootstrap_indices(n_questions, n_boot, seed)`` as counts: ``counts(rows)`` is the
    (len(rows) × n_questions) matrix of how often each question is drawn in those resamples (uint8 or
    uint16: a count never reaches the type's limit).

    The draws are mapped from the bit generator's words a few resamples at a time and counted by scipy's
    compiled sparse-to-dense routine (a resample is a row of a CSR matrix whose column indices are its
    draws; duplicates add up), so the index matrix itself is never stored.
    """

    def __init__(self, n_questions: int, n_boot: int, seed: int) -> None:
        self.n_questions, self.n_boot = n_questions, n_boot
        self.counter = np.uint8 if n_questions < 256 else np.uint16
        self.words = self.full = None
        if n_boot == 0 or n_questions == 0:
            self.full = np.zeros((n_boot, n_questions), dtype=self.counter)
        elif n_questions == 1 or n_questions >= 2**21:
            indices = bootstrap_indices(n_questions, n_boot, seed)
            self.full = np.zeros((n_boot, n_questions), dtype=np.int64)
            for b in range(n_boot):
                self.full[b] = np.bincount(indices[b], minlength=n_questions)
        else:
            self.words = index_words(n_questions, n_boot, seed).reshape(n_boot, n_questions)
        rows = max(1, WORDS_CHUNK // max(n_questions, 1))
        size = rows * n_questions
        self._rows = rows
        self._indptr = np.arange(0, size + 1, max(n_questions, 1), dtype=np.int32)
        self._ones = np.ones(size, dtype=self.counter)
        self._draws = np.empty(size, dtype=np.int32)
        self._buffer = np.empty(size)

    def counts(self, rows: slice | np.ndarray) -> np.ndarray:
        if self.full is not None:
            return self.full[rows]
        words = self.words[rows]
        n = self.n_questions
        out = np.zeros((words.shape[0], n), dtype=self.counter)
        for first in range(0, words.shape[0], self._rows):
            last = min(words.shape[0], first + self._rows)
            used = (last - first) * n
            map_words(words[first:last].reshape(-1), n, self._draws[:used], self._buffer)
            _sparsetools.csr_todense(
                last - first,
                n,
                self._indptr[: last - first + 1],
                self._draws[:used],
                self._ones[:used],
                out[first:last],
            )
        return out


def _cumsum_rows(x: np.ndarray) -> None:
    """In-place cumulative sum down the rows of a C-contiguous 2-D array, in about 2 sqrt(rows) numpy
    calls: within blocks of s rows first (s - 1 strided adds over all blocks), then each block offset by
    the running total of the blocks before it. (np.cumsum(axis=0) is slow on this layout, and one call
    per row is dominated by call overhead when rows are many.)"""
    n_rows = x.shape[0]
    if n_rows < 2:
        return
    size = max(1, math.isqrt(n_rows))
    n_blocks = n_rows // size
    blocks = x[: n_blocks * size].reshape(n_blocks, size, -1)
    for i in range(1, size):
        blocks[:, i] += blocks[:, i - 1]
    for j in range(1, n_blocks):
        blocks[j] += blocks[j - 1, -1]
    for i in range(n_blocks * size, n_rows):
        x[i] += x[i - 1]


def _group_sums(indicator: _GroupIndicator, weights: np.ndarray, *, exact_cubes: bool) -> dict[str, np.ndarray]:
    """Per column of ``weights``: zeros, n_nonzero, n_positive and the sums sum_k positive_k upper_k
    ("upper"), sum_k positive_k tied_k ("tied") and sum_k tied_k**3 ("cubed") over the indicator's groups,
    as float64 (exact integers; ``exact_cubes``: the cubes fit the kernel dtype exactly)."""
    k = indicator.n_groups
    n_questions, n_columns = weights.shape
    counts = np.zeros((2 * k + 1, n_columns), dtype=weights.dtype)
    _sparsetools.csr_matvecs(
        2 * k + 1,
        n_questions,
        n_columns,
        indicator.indptr,
        indicator.indices,
        indicator.data,
        weights.ravel(),
        counts.ravel(),
    )
    sums = {"zeros": counts[2 * k].astype(np.float64)}
    if not k:
        zero = np.zeros(n_columns)
        sums.update(n_nonzero=zero, n_positive=zero, upper=zero, tied=zero, cubed=zero)
        return sums
    positive, tied = counts[:k], counts[k : 2 * k]
    tied += positive
    sums["n_positive"] = positive.sum(axis=0, dtype=np.float64)
    sums["tied"] = np.einsum("kb,kb->b", positive, tied).astype(np.float64)
    if exact_cubes:
        sums["cubed"] = np.einsum("kb,kb,kb->b", tied, tied, tied).astype(np.float64)
    else:
        wide = tied.astype(np.float64)
        sums["cubed"] = np.einsum("kb,kb,kb->b", wide, wide, wide)
    _cumsum_rows(tied)  # tied_k -> upper_k, in place
    sums["n_nonzero"] = tied[-1].astype(np.float64)
    sums["upper"] = np.einsum("kb,kb->b", positive, tied).astype(np.float64)
    return sums


def _ranks(sums: dict[str, np.ndarray], zero_method: str) -> _RankColumns:
    return _signed_rank_from_counts(
        zeros=sums["zeros"],
        n_nonzero=sums["n_nonzero"],
        n_positive=sums["n_positive"],
        positive_upper=sums["upper"],
        positive_tied=sums["tied"],
        tied_cubed=sums["cubed"],
        zero_method=zero_method,
    )


def _effect_bounds(sums: dict[str, np.ndarray], params: AnalysisParameters) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on each column's effect from coarse-group sums.

    Within a merged group the coarse mid-rank replaces the exact ranks of its draws; the positives' rank
    sum there is off by at most positive · negative / 2 (all positives ranked above the negatives, or all
    below), so R+ lies within coarse R+ ± "spread". The tie correction of a merged group lies between
    its count (every draw its own tie group) and its cube (one tie group). The effect is monotone in R+
    and in the standard error, so the corners bound it; a margin far above floating-point rounding
    covers the difference between these bounds and the exact computation's rounding.
    """
    zero_method = params.zero_method
    zeros, n_nonzero = sums["zeros"], sums["n_nonzero"]
    n_complete = n_nonzero + zeros
    offset = np.zeros_like(zeros) if zero_method == "wilcox" else zeros
    count = n_nonzero if zero_method == "wilcox" else n_complete
    r_plus = sums["upper"] - sums["tied"] / 2 + sums["n_positive"] * (offset + 0.5)
    shift = zeros * (zeros + 1) / 2 / 2 if zero_method == "zsplit" else 0.0
    r_low, r_high = r_plus - sums["spread"] + shift, r_plus + sums["spread"] + shift
    has_nonzero = n_nonzero > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        if params.effect == "rank_biserial":
            total = n_nonzero * offset + n_nonzero * (n_nonzero + 1) / 2 + 2 * shift  # R+ + R-
            rank_sum = np.where(has_nonzero, count * (count + 1) / 2, 1.0)
            low, high = (2 * r_low - total) / rank_sum, (2 * r_high - total) / rank_sum
        else:
            mn = count * (count + 1.0) * 0.25
            se = count * (count + 1.0) * (2.0 * count + 1.0)
            if zero_method == "pratt":
                mn = mn - zeros * (zeros + 1.0) * 0.25
                se = se - zeros * (zeros + 1.0) * (2.0 * zeros + 1.0)
            ties = sums["cubed"] - n_nonzero + (zeros**3 - zeros if zero_method == "zsplit" else 0.0)
            se_low = np.sqrt(np.maximum(se - (ties + sums["cubed_high"]) / 2, 0.0) / 24)
            se_high = np.sqrt(np.maximum(se - (ties + sums["cubed_low"]) / 2, 0.0) / 24)
            below, above = r_low - mn, r_high - mn
            z_low = np.where(below >= 0, below / se_high, below / se_low)
            z_high = np.where(above >= 0, above / se_low, above / se_high)
            denominator = n_complete if params.r_denominator == "all" else n_nonzero
            root = np.sqrt(np.where(denominator > 0, denominator, 1.0))
            low, high = z_low / root, z_high / root
    low = np.where(has_nonzero, np.nan_to_num(low, nan=-np.inf), 0.0)
    high = np.where(has_nonzero, np.nan_to_num(high, nan=np.inf), 0.0)
    margin = 1e-9 * (1 + np.abs(low) + np.abs(high))
    return low - margin, high + margin


def _quantile_positions(n_boot: int, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The order statistics (j, j + 1) and weights g of the two percentile-interval ends, exactly as
    scipy.stats.quantile (method 'linear', Hyndman & Fan type 7) computes them inside
    scipy.stats.bootstrap(method='percentile'): m = 1 - p, jg = p n + m, j = jg // 1 - 1, g = jg % 1."""
    alpha = (1 - confidence) / 2
    p = np.asarray([alpha, 1 - alpha])
    n = np.asarray(float(n_boot))
    jg = p * n + (1 - p)
    jp1 = jg // 1
    j = jp1 - 1
    g = jg % 1
    g = np.where(j < 0, 0.0, g)
    j = np.clip(j, 0.0, n - 1).astype(np.int64)
    jp1 = np.clip(jp1, 0.0, n - 1).astype(np.int64)
    return j, jp1, g


def _interval_from_order(order_statistic: Callable[[int], float], j, jp1, g) -> tuple[float, float]:
    low = (1 - g[0]) * order_statistic(int(j[0])) + g[0] * order_statistic(int(jp1[0]))
    high = (1 - g[1]) * order_statistic(int(j[1])) + g[1] * order_statistic(int(jp1[1]))
    return low, high


def _percentile_interval(boot_effects: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile CI along the last axis, exactly as scipy.stats.bootstrap(method='percentile') computes it
    (the order statistics found by np.partition instead of a full sort)."""
    n_boot = boot_effects.shape[-1]
    if n_boot == 0 or np.isnan(boot_effects).any():
        alpha = (1 - confidence) / 2
        ci = stats.quantile(boot_effects, np.asarray([alpha, 1 - alpha]), axis=-1)
        return ci[..., 0], ci[..., 1]
    j, jp1, g = _quantile_positions(n_boot, confidence)
    ordered = np.partition(boot_effects, np.unique(np.concatenate([j, jp1])), axis=-1)
    low = (1 - g[0]) * ordered[..., j[0]] + g[0] * ordered[..., jp1[0]]
    high = (1 - g[1]) * ordered[..., j[1]] + g[1] * ordered[..., jp1[1]]
    return low, high


@dataclass(frozen=True)
class _CellColumns:
    """One cell's kernel output: column 0 is the observed sample, columns 1.. the resamples. ``effects``
    may hold the observed effect only (when the resamples' were bounded, not all computed); their
    percentile interval is ``effect_ci``."""

    observed: _RankColumns
    effects: np.ndarray
    mean_diffs: np.ndarray  # mean difference B − A; 0 in a resample with no complete pair
    n_degenerate: int
    effect_ci: tuple[float, float] = (math.nan, math.nan)


def _cumsum_leading(x: np.ndarray) -> None:
    """In-place cumulative sum along axis 0 of a C-contiguous array, in about 2 sqrt(len) numpy calls on
    contiguous slabs: within blocks of s first (s - 1 strided adds over all blocks), then each block
    offset by the running total of the blocks before it. (np.cumsum(axis=0) is slow on this layout, and
    one call per row is dominated by call overhead.)"""
    n_rows = x.shape[0]
    if n_rows < 2:
        return
    size = max(1, math.isqrt(n_rows))
    n_blocks = n_rows // size
    blocks = x[: n_blocks * size].reshape(n_blocks, size, -1)
    for i in range(1, size):
        blocks[:, i] += blocks[:, i - 1]
    for j in range(1, n_blocks):
        blocks[j] += blocks[j - 1, -1]
    for i in range(n_blocks * size, n_rows):
        x[i] += x[i - 1]


@dataclass
class _FirstPass:
    """Several metrics of a contrast stacked for one sparse product per chunk of resamples: rows
    (group k, metric m) in group-major order — positives k·M + m, negatives G·M + k·M + m, zeros 2·G·M + m
    — so every later step works on contiguous (metrics × columns) slabs. Exact (``merged`` None: the
    metrics' tie groups) or coarse (bounds, see _effect_bounds). ``sums``: name -> (metrics, columns)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_groups: int
    merged: np.ndarray | None  # (groups, metrics) 0/1, coarse passes only
    sums: dict[str, np.ndarray]

    @classmethod
    def build(cls, encoded: Sequence[_EncodedDifferences], n_columns: int, coarse: bool) -> _FirstPass:
        n_metrics = len(encoded)
        firsts = [e.first_groups for e in encoded]
        n_groups = max([g for _, g in firsts] + [1])
        rows, columns = [], []
        for m, (e, (group, _)) in enumerate(zip(encoded, firsts, strict=True)):
            rows += [np.where(e.positive, group, n_groups + group) * n_metrics + m]
            rows += [np.full(e.zero.size, 2 * n_groups * n_metrics + m)]
            columns += [e.nonzero, e.zero]
        row = np.concatenate(rows)
        order = np.argsort(row, kind="stable")
        n_rows = (2 * n_groups + 1) * n_metrics
        indptr = np.zeros(n_rows + 1, dtype=np.int32)
        np.cumsum(np.bincount(row, minlength=n_rows), out=indptr[1:])
        dtype = _kernel_dtype(encoded[0].n_questions)
        names = ["zeros", "n_nonzero", "n_positive", "upper", "tied", "cubed"]
        merged = None
        if coarse:
            names += ["cubed_low", "cubed_high", "spread"]
            merged = np.zeros((n_groups, n_metrics), dtype=dtype)
            for m, e in enumerate(encoded):
                merged[: e.merged.size, m] = e.merged
        return cls(
            indptr=indptr,
            indices=np.concatenate(columns)[order].astype(np.int32),
            data=np.ones(row.size, dtype=dtype),
            n_groups=n_groups,
            merged=merged,
            sums={name: np.zeros((n_metrics, n_columns)) for name in names},
        )

    def add(self, w: np.ndarray, c0: int) -> None:
        """The sums of columns c0.. from their counts w (n_questions × columns)."""
        n_metrics = self.sums["zeros"].shape[0]
        n_groups = self.n_groups
        n_questions, width = w.shape
        c1 = c0 + width
        counts = np.zeros(((2 * n_groups + 1) * n_metrics, width), dtype=w.dtype)
        _sparsetools.csr_matvecs(
            counts.shape[0], n_questions, width, self.indptr, self.indices, self.data, w.ravel(), counts.ravel()
        )
        block = n_groups * n_metrics
        positive = counts[:block].reshape(n_groups, n_metrics, width)
        tied = counts[block : 2 * block].reshape(n_groups, n_metrics, width)
        tied += positive
        s = self.sums
        s["zeros"][:, c0:c1] = counts[2 * block :]
        s["n_positive"][:, c0:c1] = positive.sum(axis=0)
        s["tied"][:, c0:c1] = np.einsum("kmb,kmb->mb", positive, tied)
        if self.merged is None:
            # sum_k tied_k**3 <= max(tied)**2 * n: exact in the kernel dtype below its limit
            if float(tied.max()) ** 2 * n_questions < _EXACT_LIMIT[w.dtype]:
                s["cubed"][:, c0:c1] = np.einsum("kmb,kmb,kmb->mb", tied, tied, tied)
            else:
                wide = tied.astype(np.float64)
                s["cubed"][:, c0:c1] = np.einsum("kmb,kmb,kmb->mb", wide, wide, wide)
        else:
            s["spread"][:, c0:c1] = np.einsum("km,kmb->mb", self.merged, positive * (tied - positive)) / 2
            wide = tied.astype(np.float64)
            cubes = wide * wide * wide
            merged = self.merged.astype(np.float64)
            s["cubed"][:, c0:c1] = np.einsum("km,kmb->mb", 1 - merged, cubes)
            s["cubed_high"][:, c0:c1] = np.einsum("km,kmb->mb", merged, cubes)
            s["cubed_low"][:, c0:c1] = np.einsum("km,kmb->mb", merged, wide)  # every draw at least a tie of one
        _cumsum_leading(tied)  # tied_k -> upper_k, in place
        s["n_nonzero"][:, c0:c1] = tied[-1]
        s["upper"][:, c0:c1] = np.einsum("kmb,kmb->mb", positive, tied)


def _observed_and_bootstrap(
    encoded: Sequence[_EncodedDifferences], n_questions: int, params: AnalysisParameters, seed: int
) -> list[_CellColumns]:
    """Observed and bootstrap effects, their percentile interval, and mean differences of the metrics of
    one contrast, on the resamples of ``bootstrap_indices(n_questions, params.n_boot, seed)``.

    Column 0 is the observed sample (every question once), column 1 + b resample b. Resamples are drawn
    and counted a cache-sized chunk at a time (W: questions × resamples); one sparse product with the
    stacked group indicators of the metrics gives positive_k, negative_k and the zeros per column, then the
    signed-rank sums (cumulative counts down the groups); one dense product the mean differences. A metric
    with at most _EXACT_GROUPS distinct |d| is grouped by its ties: exact on every column. One with more
    (transcript-derived values) is ranked on coarse groups of consecutive |d|, which bounds every column's
    effect (_effect_bounds); only the columns that can be one of the four order statistics of the
    percentile interval (and the observed one) are then computed with its tie groups, which gives the
    interval exactly. All sums are exact integers (see _FLOAT32_MAX_QUESTIONS).
    """
    n_boot = params.n_boot
    n_columns = n_boot + 1
    dtype = _kernel_dtype(n_questions)
    exact = [m for m, e in enumerate(encoded) if e.coarse_of is None]
    coarse = [m for m, e in enumerate(encoded) if e.coarse_of is not None]
    passes = [
        (members, _FirstPass.build([encoded[m] for m in members], n_columns, kind))
        for members, kind in ((exact, False), (coarse, True))
        if members
    ]
    chunked = [e.chunks for e in encoded if e.chunks is not None]
    chunks = np.concatenate(chunked) if chunked else None
    signed = np.zeros((0 if chunks is None else chunks.shape[0], n_columns))
    resamples = _Resamples(n_questions, n_boot, seed)
    counts_all = np.empty((n_boot, n_questions), dtype=resamples.counter)  # kept for the exact passes
    largest_weight = 1
    for c0 in range(0, n_columns, _COLUMN_CHUNK):
        c1 = min(n_columns, c0 + _COLUMN_CHUNK)
        w = np.empty((n_questions, c1 - c0), dtype=dtype)
        first = 1 if c0 == 0 else 0
        if first:
            w[:, 0] = 1
        counts = resamples.counts(slice(c0 + first - 1, c1 - 1))
        counts_all[c0 + first - 1 : c1 - 1] = counts
        w[:, first:] = counts.T
        largest_weight = max(largest_weight, int(counts.max()) if counts.size else 1)
        for _, first_pass in passes:
            first_pass.add(w, c0)
        if chunks is not None:
            signed[:, c0:c1] = chunks @ w

    j, jp1, g = _quantile_positions(n_boot, params.confidence) if n_boot else (None, None, None)
    sums_of: dict[int, dict[str, np.ndarray]] = {}
    cells: dict[int, tuple] = {}
    for members, first_pass in passes:
        for i, m in enumerate(members):
            sums_of[m] = {name: values[i] for name, values in first_pass.sums.items()}
        if first_pass.merged is not None:
            continue
        ranks = _ranks(first_pass.sums, params.zero_method)
        effects = _effect_columns(ranks, params)
        low = high = np.full(len(members), np.nan)
        if n_boot:
            low, high = _percentile_interval(effects[:, 1:], params.confidence)
        for i, m in enumerate(members):
            observed = _RankColumns(*(np.asarray(getattr(ranks, f.name)[i, :1]) for f in fields(_RankColumns)))
            cells[m] = (effects[i], observed, (low[i], high[i]))
    for m in coarse:
        cells[m] = _exact_interval(encoded[m], sums_of[m], counts_all, params, largest_weight, (j, jp1, g))

    row = 0
    out = []
    for m, e in enumerate(encoded):
        sums = sums_of[m]
        if e.chunks is not None:
            total = np.zeros(n_columns, dtype=np.int64)
            for c in range(e.chunks.shape[0]):
                total += signed[row + c].astype(np.int64) << (c * e.chunk_bits)
            row += e.chunks.shape[0]
            signed_total = total.astype(np.float64) / e.scale
        else:
            signed_total = _signed_total_float(e, counts_all)
        n_complete = sums["zeros"] + sums["n_nonzero"]
        has_pairs = n_complete > 0
        mean_diffs = np.where(has_pairs, signed_total / np.where(has_pairs, n_complete, 1), 0.0)
        n_degenerate = int(np.count_nonzero(sums["n_nonzero"][1:] == 0))
        effects, observed, ci = cells[m]
        out.append(_CellColumns(observed, effects, mean_diffs, n_degenerate, ci))
    return out


def _exact_interval(
    e: _EncodedDifferences,
    sums: dict[str, np.ndarray],
    counts: np.ndarray,
    params: AnalysisParameters,
    largest_weight: int,
    positions: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, _RankColumns, tuple[float, float]]:
    """A coarse metric's observed effect and exact percentile interval: the columns whose bounds allow
    them to be one of the order statistics needed, recomputed with the metric's tie groups."""
    n_questions = e.n_questions
    dtype = _kernel_dtype(n_questions)
    bound = min(n_questions, e.max_tied * largest_weight)  # the largest tie a column can hold
    exact_cubes = bound**2 * n_questions < _EXACT_LIMIT[dtype]
    j, jp1, g = positions
    if j is None:  # no resamples: the observed effect only
        ranks = _ranks(
            _group_sums(e.fine(), np.ones((n_questions, 1), dtype=dtype), exact_cubes=exact_cubes), params.zero_method
        )
        return _effect_columns(ranks, params), ranks, (math.nan, math.nan)
    low, high = _effect_bounds(sums, params)
    low, high = low[1:], high[1:]
    needed = np.unique(np.concatenate([j, jp1]))
    low_k, high_k = np.partition(low, needed)[needed], np.partition(high, needed)[needed]
    candidate = np.zeros(low.size, dtype=bool)
    for lo_k, hi_k in zip(low_k, high_k, strict=True):
        candidate |= (high >= lo_k) & (low <= hi_k)
    chosen = np.flatnonzero(candidate)
    w = np.empty((n_questions, 1 + chosen.size), dtype=dtype)
    w[:, 0] = 1
    w[:, 1:] = counts[chosen].T
    ranks = _ranks(_group_sums(e.fine(), w, exact_cubes=exact_cubes), params.zero_method)
    effects = _effect_columns(ranks, params)
    value = np.full(low.size, np.nan)
    value[chosen] = effects[1:]

    def order_statistic(k: int) -> float:
        # the columns surely below the k-th smallest come first; it is among those that may be it
        i = int(np.searchsorted(needed, k))
        below = np.count_nonzero(high < low_k[i])
        inside = (high >= low_k[i]) & (low <= high_k[i])
        return np.sort(value[inside])[k - below]

    observed = _RankColumns(*(np.asarray(getattr(ranks, f.name)[:1]) for f in fields(_RankColumns)))
    return effects[:1], observed, _interval_from_order(order_statistic, j, jp1, g)


def _signed_total_float(encoded: _EncodedDifferences, counts: np.ndarray) -> np.ndarray:
    """sum_q w_q d_q per column in float64, for differences too large to chunk."""
    values = np.nan_to_num(encoded.values)
    resampled = counts.astype(np.float64) @ values
    return np.concatenate([[values.sum()], resampled])


def _cell_result(
    d: np.ndarray,
    cell: _CellColumns,
    ci: tuple[float, float],
    mean_ci: tuple[float, float],
    params: AnalysisParameters,
) -> PairedEffect:
    """One cell from its rounded differences ``d`` (NaN = no pair), kernel columns and the two intervals."""
    observed = cell.observed
    n = int(observed.n_complete[0])
    n_nonzero = int(observed.n_nonzero[0])
    ci_low, ci_high = ci
    mean_low, mean_high = mean_ci
    p_method = "normal"
    if n == 0:
        r = z = p = p_test = ci_low = ci_high = mean_low = mean_high = math.nan
        mean_diff = share_b = share_a = math.nan
    else:
        present = d[~np.isnan(d)]
        mean_diff = float(cell.mean_diffs[0])
        share_b = float(np.count_nonzero(present > 0) / n)
        share_a = float(np.count_nonzero(present < 0) / n)
        if n_nonzero == 0:
            # scipy returns NaN here; every pair is tied, so there is no evidence of any difference.
            r, z, p, p_test = 0.0, 0.0, 1.0, 1.0
        else:
            r = float(cell.effects[0])
            z = float(observed.z[0])
            p = float(2 * special.ndtr(-abs(z)))
            if n_nonzero <= EXACT_MAX_NONZERO:
                p_test, p_method = signed_rank_exact_p(d, params.zero_method), "exact"
            else:
                p_test = p
    insufficient = n < params.min_pairs
    violation = is_violation(
        params.rule,
        insufficient=insufficient,
        r=r,
        ci_low=ci_low,
        ci_high=ci_high,
        p_test=p_test,
        threshold=params.threshold,
        alpha=params.alpha,
    )
    return PairedEffect(
        n=n,
        n_nonzero=n_nonzero,
        r=r,
        z=z,
        p=p,
        ci_low=float(ci_low),
        ci_high=float(ci_high),
        violation=violation,
        insufficient=bool(insufficient),
        n_boot_degenerate=int(cell.n_degenerate),
        parameters=params,
        p_test=float(p_test),
        p_method=p_method,
        mean_diff=mean_diff,
        mean_diff_ci_low=float(mean_low),
        mean_diff_ci_high=float(mean_high),
        share_b_higher=share_b,
        share_a_higher=share_a,
        saturated=bool(n_nonzero > 0 and (share_a == 0 or share_b == 0)),
    )
