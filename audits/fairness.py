"""Paired-contrast fairness statistics for EduFair audits: effect sizes, bootstrap CIs, violation flags, summaries.

Pure numpy / scipy / statsmodels (no Django), so a notebook can import it. It implements "The statistics,
precisely" of docs/ARCHITECTURE.md:

* ``paired_effect(a, b)`` — one contrast cell: Wilcoxon signed-rank on the paired differences ``b - a``
  (normal approximation with tie correction, no continuity correction), effect r = Z/sqrt(N) or the
  matched-pairs rank-biserial correlation, a paired percentile bootstrap CI over questions, and the
  violation / insufficient flags.
* ``contrast_table(scores, design)`` — every explicit, implicit and opposite contrast of an audit for
  every (tutor, domain, metric), vectorised: one resample-index matrix per (tutor, domain, contrast) is
  shared by all metrics, and the signed-rank statistic of all resamples is computed at once from the
  per-resample counts of each tie group of |differences|, so nothing loops over resamples in Python.
  Metrics with many distinct values (transcript-derived) are ranked on coarse groups first, which bounds
  every resample's effect, and computed exactly only for the resamples that can be an end of the CI.
  Benjamini–Hochberg-adjusted p-values are added per table family.
* summaries as in EduFair-Bench (domain × dimension cells, "k of 12" cells over threshold, metric ×
  tutor, implicit name rows, opposite decomposition, tutor vs backbone), ``min_detectable_effect`` and
  ``dialogue_scores`` (per-turn judge values → one score per dialogue).

Exactness. The signed-rank sums are computed from counts, but with the same floating-point operations as
``scipy.stats.wilcoxon(..., method="asymptotic")`` (all intermediate values are exact integers or
half-integers), so |Z| and p are bit-identical to scipy's on the same rounded differences. The bootstrap
draws its index matrix exactly as ``scipy.stats.bootstrap(..., paired=True, rng=seed)`` does (the same
PCG64 words mapped the way ``Generator.integers`` maps them) and takes percentiles with the formula of
``scipy.stats.quantile``, so the CI is bit-identical to scipy's bootstrap with the same seed and statistic
(audits/tests/test_fairness_reference.py and benchmarks/fairness_scale.py check this). The mean
difference of a resample is an exact integer sum of the differences scaled by 10**round_decimals, divided
once: deterministic, and equal to np.mean's up to rounding (the benchmark compares its CI with
``scipy.stats.bootstrap`` of ``np.mean``).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import multiprocessing
import warnings
import weakref
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, fields
from itertools import combinations
from typing import Any

import numpy as np
from scipy import special, stats
from scipy.sparse import _sparsetools
from statsmodels.stats.multitest import multipletests

from audits.analysis_parameters import (
    ANALYSIS_DEFAULTS,
    ROUND_DECIMALS,
    AnalysisParameters,
    Effect,
    RDenominator,
    ZeroMethod,
)
from audits.exact_signed_rank import EXACT_MAX_NONZERO, signed_rank_exact_p
from audits.violation_rules import DEFAULT_RULE, Rule, is_bh_violation, is_violation
from edufair_web.rubric_metrics import DEFAULT_RUBRIC_METRICS

TURN_METRICS: tuple[str, ...] = DEFAULT_RUBRIC_METRICS  # the judge's metrics (edufair_web.rubric_metrics)
CONVERSATION_METRICS: tuple[str, ...] = (
    "tutor_turns",
    "tutor_avg_word",
    "tutor_question_rate",
    "tutor_student_word_ratio",
)
# The simulated student's own turns, analysed with the same contrasts as a check on the simulator: where
# they differ between levels, conversation metrics built on student words are not the tutor's doing.
STUDENT_METRICS: tuple[str, ...] = ("student_turns", "student_avg_word")
STUDENT_DEPENDENT_METRICS: tuple[str, ...] = ("tutor_student_word_ratio",)
KINDS: tuple[str, ...] = ("control", "explicit", "implicit", "opposite")
IMPLICIT_ROWS: tuple[str, ...] = ("gender", "ethnicity", "both")
OPPOSITE_COMPONENTS: tuple[str, ...] = ("correct_gap", "wrong_gap", "tutor_effect", "simulator_effect", "interaction")


# --------------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PairedEffect:
    """One contrast cell. ``r`` is the chosen effect (``parameters.effect``), signed: positive = level B higher.

    ``n`` counts complete pairs (both scores present), ``n_nonzero`` those with a non-zero difference.
    ``z`` is the signed normal-approximation statistic (scipy reports ``-|z|`` for two-sided tests).
    ``n_boot_degenerate`` counts resamples with no non-zero difference; their effect is taken as 0.
    ``p`` is the normal approximation (as scipy's asymptotic method); ``p_test`` is the p the calibrated
    rule and the BH flag use: exact (``p_method="exact"``) up to EXACT_MAX_NONZERO non-zero differences.
    ``mean_diff`` is the mean paired difference B − A in the metric's own units, with its bootstrap CI from
    the same resamples; ``share_b_higher`` / ``share_a_higher`` the shares of pairs favouring each side.
    ``saturated``: every non-zero difference has the same sign, so r sits at the ceiling its own n, zero
    differences and ties allow (``r_ceiling``; R_CEILING_TEXT says what that is) and its CI collapses; read
    the mean difference instead.
    """

    n: int
    n_nonzero: int
    r: float
    z: float
    p: float
    ci_low: float
    ci_high: float
    violation: bool
    insufficient: bool
    n_boot_degenerate: int
    parameters: AnalysisParameters
    p_test: float = math.nan
    p_method: str = "normal"
    mean_diff: float = math.nan
    mean_diff_ci_low: float = math.nan
    mean_diff_ci_high: float = math.nan
    share_b_higher: float = math.nan
    share_a_higher: float = math.nan
    saturated: bool = False


# --------------------------------------------------------------------------------------------------
# The signed-rank statistic from counts of distinct differences (shared by paired_effect and the table)
# --------------------------------------------------------------------------------------------------


def _round_differences(a: np.ndarray, b: np.ndarray, decimals: int) -> np.ndarray:
    return np.round(np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64), decimals)


# Every quantity the kernel sums is an integer (a count, a sum of counts, a product of two or three, a
# chunk of a scaled difference times a count) or a half-integer, bounded by a power of the number of
# questions n. Such sums are exact in floating point, in any order, while they stay below 2**24
# (float32) or 2**53 (float64): float32 — half the memory traffic — serves cells of up to
# _FLOAT32_MAX_QUESTIONS questions (the largest, sum_k positive_k upper_k <= n**2, stays below 2**23),
# float64 the rest. Exactness is what makes R+ and the tie correction equal to scipy's, and every result
# independent of BLAS, of how resamples are grouped and of the other metrics of the contrast.
_FLOAT32_MAX_QUESTIONS = 2896
_EXACT_LIMIT = {np.dtype(np.float32): 2.0**24, np.dtype(np.float64): 2.0**53}
# A metric with many distinct |differences| is first ranked on this many coarse groups of consecutive |d|
# (see _observed_and_bootstrap).
_COARSE_GROUPS = 64
# Metrics with at most this many distinct |d| (judge scores: means of a few 0/1/2 values) skip the coarse
# pass: coarse groups would hold too many draws to bound the effect usefully.
_EXACT_GROUPS = 128
# Resamples are drawn, counted and put through the first pass this many at a time: the pass's matrices
# then stay in the CPU's cache (the kernel is memory-bound otherwise).
_COLUMN_CHUNK = 256


def _kernel_dtype(n_questions: int) -> np.dtype:
    return np.dtype(np.float32 if n_questions <= _FLOAT32_MAX_QUESTIONS else np.float64)


@dataclass(frozen=True)
class _GroupIndicator:
    """A sparse 0/1 (2K + 1) × n matrix over questions, in CSR arrays: row k < K holds the questions of
    tie group k (the k-th smallest distinct non-zero |d|) with d > 0, row K + k those with d < 0, row 2K
    those with d == 0; missing pairs are in no row, every other question in exactly one. Its product with
    the resample counts W gives per resample (column) positive_k, negative_k and the zeros."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_groups: int


@dataclass(frozen=True)
class _EncodedDifferences:
    """One metric's rounded differences, for the kernel.

    ``nonzero``/``zero``: the questions with a non-zero / zero difference (missing pairs in neither);
    ``positive``: which non-zero ones are > 0; ``code``: the tie group of each non-zero one (groups 0..K-1
    in increasing |d|). ``coarse_of``: None when K <= _EXACT_GROUPS, else the coarse group of each tie
    group (about _COARSE_GROUPS groups of consecutive |d|), ``merged`` marking the coarse groups holding
    more than one tie group. ``chunks`` (n_chunks × n) splits round(d · 10**decimals) into signed chunks of
    ``chunk_bits`` bits, so that sum_q w_q d_q — the mean difference — is an exact integer sum as well
    (None when the scaled differences do not fit int64: the mean is then summed in float64).
    """

    n_questions: int
    nonzero: np.ndarray
    positive: np.ndarray
    zero: np.ndarray
    code: np.ndarray
    n_abs: int
    coarse_of: np.ndarray | None
    merged: np.ndarray
    max_tied: int  # largest tie group, in questions
    chunks: np.ndarray | None
    chunk_bits: int
    scale: float
    values: np.ndarray

    @property
    def first_groups(self) -> tuple[np.ndarray, int]:
        """The group of each non-zero question in the first pass, and their number."""
        if self.coarse_of is None:
            return self.code, self.n_abs
        return self.coarse_of[self.code], self.merged.size

    def fine(self) -> _GroupIndicator:
        k = self.n_abs
        rows = np.concatenate([np.where(self.positive, self.code, k + self.code), np.full(self.zero.size, 2 * k)])
        columns = np.concatenate([self.nonzero, self.zero])
        order = np.argsort(rows, kind="stable")
        indptr = np.zeros(2 * k + 2, dtype=np.int32)
        np.cumsum(np.bincount(rows, minlength=2 * k + 1), out=indptr[1:])
        dtype = _kernel_dtype(self.n_questions)
        return _GroupIndicator(indptr, columns[order].astype(np.int32), np.ones(rows.size, dtype=dtype), k)


def _encode_differences(d: np.ndarray, decimals: int = ROUND_DECIMALS) -> _EncodedDifferences:
    """Encode one metric's rounded differences ``d`` (one per question, NaN = no pair)."""
    n = d.size
    dtype = _kernel_dtype(n)
    present = ~np.isnan(d)
    nonzero = np.flatnonzero(present & (d != 0))
    zero = np.flatnonzero(present & (d == 0))
    abs_values, code, tied = np.unique(np.abs(d[nonzero]), return_inverse=True, return_counts=True)
    n_abs = abs_values.size
    coarse_of, merged = None, np.zeros(0, dtype=bool)
    if n_abs > _EXACT_GROUPS:
        # coarse group of tie group k: by the number of questions below it, in _COARSE_GROUPS equal parts
        below = np.cumsum(tied) - tied
        _, coarse_of, members = np.unique(
            (below * _COARSE_GROUPS) // nonzero.size, return_inverse=True, return_counts=True
        )
        merged = members > 1

    scale = 10.0**decimals
    with np.errstate(invalid="ignore"):
        scaled = np.rint(np.where(present, d, 0.0) * scale)
    largest = float(np.abs(scaled).max()) if n else 0.0
    # chunks of b bits: sum_q w_q |chunk_q| <= n (2**b - 1) stays below the exact limit
    chunk_bits = max(1, int(math.floor(math.log2(_EXACT_LIMIT[dtype] / max(n, 1)))) - 1)
    chunks = None
    if largest < 2.0**62:
        magnitude = np.abs(scaled).astype(np.int64)
        sign = np.sign(scaled)
        n_chunks = max(1, math.ceil(int(largest).bit_length() / chunk_bits))
        chunks = np.stack(
            [sign * ((magnitude >> (c * chunk_bits)) & ((1 << chunk_bits) - 1)) for c in range(n_chunks)]
        ).astype(dtype)
    return _EncodedDifferences(
        n_questions=n,
        nonzero=nonzero,
        positive=d[nonzero] > 0,
        zero=zero,
        code=code,
        n_abs=n_abs,
        coarse_of=coarse_of,
        merged=merged,
        max_tied=int(tied.max()) if n_abs else 0,
        chunks=chunks,
        chunk_bits=chunk_bits,
        scale=scale,
        values=d,
    )


@dataclass(frozen=True)
class _RankColumns:
    """Signed-rank results for a batch of (re)samples, one entry per column."""

    n_complete: np.ndarray
    n_nonzero: np.ndarray
    z: np.ndarray  # NaN where no non-zero difference
    rank_biserial: np.ndarray  # NaN where no non-zero difference


def _signed_rank_from_counts(
    *,
    zeros: np.ndarray,
    n_nonzero: np.ndarray,
    n_positive: np.ndarray,
    positive_upper: np.ndarray,
    positive_tied: np.ndarray,
    tied_cubed: np.ndarray,
    zero_method: str,
) -> _RankColumns:
    """Wilcoxon signed-rank Z for every column, from sums over the tie groups of each column.

    With tied_k the count of non-zero differences in group k, positive_k those above 0 and upper_k =
    tied_1 + ... + tied_k, group k holds ranks offset + upper_{k-1} + 1 .. offset + upper_k, so its
    mid-rank is offset + upper_k - (tied_k - 1)/2 and
    R+ = sum_k positive_k upper_k - sum_k positive_k tied_k / 2 + n_positive (offset + 1/2).
    ``positive_upper``, ``positive_tied`` and ``tied_cubed`` (sum_k tied_k**3, for the tie correction) are
    those sums, exact integers, so R+ is exact. The arithmetic afterwards mirrors
    scipy.stats._wilcoxon._wilcoxon_statistic operation by operation, hence bit-identical results.
    """
    n_complete = n_nonzero + zeros
    offset = np.zeros_like(zeros) if zero_method == "wilcox" else zeros
    count = n_nonzero if zero_method == "wilcox" else n_complete
    r_plus = positive_upper - positive_tied / 2 + n_positive * (offset + 0.5)
    # ranks of all non-zero differences are offset + 1 .. offset + n_nonzero
    r_minus = n_nonzero * offset + n_nonzero * (n_nonzero + 1) / 2 - r_plus
    tie_correct = tied_cubed - n_nonzero
    if zero_method == "zsplit":
        zero_rank_half = zeros * (zeros + 1) / 2 / 2
        r_plus = r_plus + zero_rank_half
        r_minus = r_minus + zero_rank_half
        tie_correct = tie_correct + (zeros**3 - zeros)

    mn = count * (count + 1.0) * 0.25
    se = count * (count + 1.0) * (2.0 * count + 1.0)
    if zero_method == "pratt":
        mn = mn - zeros * (zeros + 1.0) * 0.25
        se = se - zeros * (zeros + 1.0) * (2.0 * zeros + 1.0)
    se = np.sqrt((se - tie_correct / 2) / 24)

    has_nonzero = n_nonzero > 0
    safe_se = np.where(has_nonzero, se, 1.0)
    z = np.where(has_nonzero, (r_plus - mn) / safe_se, np.nan)
    rank_sum = np.where(has_nonzero, count * (count + 1) / 2, 1.0)
    rank_biserial = np.where(has_nonzero, (r_plus - r_minus) / rank_sum, np.nan)
    return _RankColumns(n_complete=n_complete, n_nonzero=n_nonzero, z=z, rank_biserial=rank_biserial)


def _effect_columns(ranks: _RankColumns, params: AnalysisParameters) -> np.ndarray:
    """The effect per column; a (re)sample with no non-zero difference has effect exactly 0."""
    if params.effect == "rank_biserial":
        effect = ranks.rank_biserial
    else:
        denominator = ranks.n_complete if params.r_denominator == "all" else ranks.n_nonzero
        effect = ranks.z / np.sqrt(np.where(denominator > 0, denominator, 1.0))
    return np.where(ranks.n_nonzero > 0, effect, 0.0)


_WORDS_CHUNK = 1 << 17  # 32-bit words mapped at a time (their float64 products stay in the L3 cache)


def _index_words(n_questions: int, n_boot: int, seed: int) -> np.ndarray:
    """The 32-bit words Generator.integers(0, n_questions, (n_boot, n_questions)) maps to its draws.

    For 1 < n < 2**32, Generator.integers reads the stream of 32-bit words of the PCG64 bit generator
    (each 64-bit output split, low half first) and maps each word u to floor(u n / 2**32) (Lemire's
    method), rejecting the rare words whose low product (u n mod 2**32) falls below (2**32 - n) mod n and
    reading the next word instead. This returns the accepted words, n_boot · n_questions of them.
    """
    size = n_boot * n_questions
    n32 = np.uint32(n_questions)
    threshold = np.uint32((2**32 - n_questions) % n_questions)
    spare = 64  # rejections are about n**2 / 2**33 per resample: a few per cell at most
    while True:
        bitgen = np.random.default_rng(seed).bit_generator
        total = size + spare
        words = bitgen.random_raw((total + 1) // 2).view(np.uint32)[:total]
        low = np.empty(min(total, _WORDS_CHUNK), dtype=np.uint32)
        rejected = []
        for start in range(0, total, _WORDS_CHUNK):
            stop = min(total, start + _WORDS_CHUNK)
            part = low[: stop - start]
            np.multiply(words[start:stop], n32, out=part)
            if part.min() < threshold:
                rejected.append(start + np.flatnonzero(part < threshold))
        if rejected:
            words = np.delete(words, np.concatenate(rejected))
        if words.size >= size:
            return words[:size]
        spare *= 16  # more rejections than spare words: draw again with more


def _map_words(words: np.ndarray, n_questions: int, out: np.ndarray, buffer: np.ndarray) -> None:
    """out[:] = floor(words * n / 2**32), exactly (the float64 product is exact for n < 2**21)."""
    product = buffer[: words.size]
    np.multiply(words, n_questions * 2.0**-32, out=product)
    out[:] = product


def bootstrap_indices(n_questions: int, n_boot: int, seed: int) -> np.ndarray:
    """The (n_boot, n_questions) resample-index matrix, drawn exactly as scipy.stats.bootstrap draws it:
    ``np.random.default_rng(seed).integers(0, n_questions, (n_boot, n_questions))``."""
    if n_questions <= 1 or n_boot == 0 or n_questions >= 2**21:
        if n_questions == 0:
            return np.empty((n_boot, 0), dtype=np.int64)
        return np.random.default_rng(seed).integers(0, n_questions, (n_boot, n_questions))
    words = _index_words(n_questions, n_boot, seed)
    out = np.empty(words.size, dtype=np.int64)
    buffer = np.empty(_WORDS_CHUNK)
    for start in range(0, words.size, _WORDS_CHUNK):
        stop = min(words.size, start + _WORDS_CHUNK)
        _map_words(words[start:stop], n_questions, out[start:stop], buffer)
    return out.reshape(n_boot, n_questions)


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
            self.words = _index_words(n_questions, n_boot, seed).reshape(n_boot, n_questions)
        rows = max(1, _WORDS_CHUNK // max(n_questions, 1))
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
            _map_words(words[first:last].reshape(-1), n, self._draws[:used], self._buffer)
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


def paired_effect(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    effect: Effect = ANALYSIS_DEFAULTS.effect,
    zero_method: ZeroMethod = ANALYSIS_DEFAULTS.zero_method,
    r_denominator: RDenominator = ANALYSIS_DEFAULTS.r_denominator,
    n_boot: int = ANALYSIS_DEFAULTS.n_boot,
    seed: int = ANALYSIS_DEFAULTS.seed,
    threshold: float = ANALYSIS_DEFAULTS.threshold,
    min_pairs: int = ANALYSIS_DEFAULTS.min_pairs,
    confidence: float = ANALYSIS_DEFAULTS.confidence,
    rule: Rule = ANALYSIS_DEFAULTS.rule,
    alpha: float = ANALYSIS_DEFAULTS.alpha,
) -> PairedEffect:
    """Effect of moving from level A to level B on one metric, paired by question.

    ``a[i]`` and ``b[i]`` are the dialogue scores of question i under levels A and B; NaN means no score.
    Differences ``b - a`` are rounded to 1e-9 and ranked. ``zero_method`` treats zero differences like
    scipy: "pratt" ranks them and drops their ranks (adjusting mean and variance), "wilcox" discards them,
    "zsplit" gives half their rank sum to each sign. ``effect="r"`` is r = Z/sqrt(N) with N = all complete
    pairs (``r_denominator="nonzero"``: only non-zero differences); ``effect="rank_biserial"`` is
    (R+ - R-) / total rank sum of the ranked pairs.

    Bootstrap: the percentile interval of the effect over ``n_boot`` resamples of the question positions
    (index matrix from ``bootstrap_indices``). With NaNs, a resample keeps whichever resampled questions
    have both scores, so its number of pairs varies, as it would in a fresh sample of questions. A
    resample with no non-zero difference (every resampled pair tied, or none complete) has effect 0:
    both levels scored identically on it, and dropping it would push the interval away from zero.

    Violation by ``rule`` (audits.violation_rules): "paper" = ``n >= min_pairs``, the CI excludes 0, and
    ``|r| >= threshold``; "calibrated" (default) also needs the signed-rank ``p_test < alpha``. With all
    pairs tied the result is r = z = 0, p = 1 (scipy returns NaN); with no complete pair everything is NaN.
    """
    params = AnalysisParameters(
        effect=effect,
        zero_method=zero_method,
        r_denominator=r_denominator,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        min_pairs=min_pairs,
        confidence=confidence,
        rule=rule,
        alpha=alpha,
    )
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError("a and b must be one-dimensional and of equal length (one entry per question)")
    return _paired_effect(_round_differences(a, b, params.round_decimals), params, params.seed)


def _paired_effect(d: np.ndarray, params: AnalysisParameters, seed: int) -> PairedEffect:
    return _contrast_effects(d[:, None], params, seed)[0]


# --------------------------------------------------------------------------------------------------
# The ceiling of r = Z/sqrt(N)
# --------------------------------------------------------------------------------------------------

# What holds, in words, for the methods box, the legend and the exports (numbers from ``r_ceiling``; the
# tests recompute each with scipy.stats.wilcoxon).
R_CEILING_TEXT = (
    "r = Z/√N is largest in size when every non-zero difference has the same sign (saturated), and that "
    "ceiling is the cell's own, set by its n, its zero differences and its ties: about 0.87 when the non-zero "
    "differences are all distinct and none is zero, up to 1.0 when they all tie, and lower with zero "
    "differences under N = all pairs (with 80 % zeros and the rest tied, 0.447 under Pratt). A saturated "
    "cell's r and its CI sit at that ceiling; read the mean difference B − A"
)


def r_ceiling(
    differences: Sequence[float] | np.ndarray,
    *,
    zero_method: ZeroMethod = ANALYSIS_DEFAULTS.zero_method,
    r_denominator: RDenominator = ANALYSIS_DEFAULTS.r_denominator,
    round_decimals: int = ROUND_DECIMALS,
) -> float:
    """The largest |r| = |Z|/sqrt(N) a cell with these paired differences (B − A; NaN = no pair) can reach.

    Its n, its zero differences and the tie groups of its |differences| stay as they are; every non-zero
    difference is given the same sign, which maximises R+ (= the sum of all non-zero ranks). Z is then
    computed with the same mean, variance and tie correction as the analysis (``_signed_rank_from_counts``,
    scipy's asymptotic Wilcoxon statistic without continuity correction), so a saturated cell's |r| equals
    its ceiling. Examples: n distinct non-zero differences give sqrt(1.5 (n + 1) / (2n + 1)) (→ 0.866);
    all tied give 1.0. NaN with no non-zero difference.
    """
    d = np.round(np.asarray(differences, dtype=np.float64), round_decimals)
    d = d[~np.isnan(d)]
    magnitudes = np.abs(d[d != 0])
    if magnitudes.size == 0:
        return math.nan
    _, tied = np.unique(magnitudes, return_counts=True)
    tied = tied.astype(np.float64)
    upper = np.cumsum(tied)
    n_nonzero = float(magnitudes.size)
    zeros = float(d.size - magnitudes.size)
    ranks = _signed_rank_from_counts(
        zeros=np.array([zeros]),
        n_nonzero=np.array([n_nonzero]),
        n_positive=np.array([n_nonzero]),
        positive_upper=np.array([float(np.sum(tied * upper))]),
        positive_tied=np.array([float(np.sum(tied**2))]),
        tied_cubed=np.array([float(np.sum(tied**3))]),
        zero_method=zero_method,
    )
    denominator = ranks.n_complete[0] if r_denominator == "all" else ranks.n_nonzero[0]
    return float(abs(ranks.z[0]) / math.sqrt(denominator))


# --------------------------------------------------------------------------------------------------
# Minimum detectable effect and dialogue scores
# --------------------------------------------------------------------------------------------------


def min_detectable_effect(
    n_pairs: int | np.ndarray, alpha: float = ANALYSIS_DEFAULTS.alpha, power: float = 0.8
) -> float | np.ndarray:
    """Smallest |r| a two-sided test at ``alpha`` detects with probability ``power`` from ``n_pairs`` pairs.

    On the r = Z/sqrt(N) scale the normal approximation gives Z ~ N(r sqrt(N), 1), so the effect is
    detectable when r sqrt(N) >= z_{1-alpha/2} + z_{power}: r_min = (z_{1-alpha/2} + z_{power}) / sqrt(N).
    NaN for fewer than one pair.
    """
    n = np.asarray(n_pairs, dtype=np.float64)
    z_total = special.ndtri(1 - alpha / 2) + special.ndtri(power)
    result = np.where(n >= 1, z_total / np.sqrt(np.where(n >= 1, n, 1.0)), np.nan)
    return float(result) if result.ndim == 0 else result


def dialogue_scores(
    dialogue: Sequence[Hashable] | np.ndarray, value: Sequence[float] | np.ndarray, *, not_applicable: float = -1
) -> tuple[np.ndarray, np.ndarray]:
    """One metric's dialogue scores from per-turn judge values: the mean over each dialogue's tutor turns.

    ``dialogue[i]`` and ``value[i]`` describe tutor turn i. Values equal to ``not_applicable`` (−1) and
    NaN are ignored; a dialogue with no applicable turn scores NaN. Returns (dialogue ids sorted, scores).
    """
    dialogue = np.asarray(dialogue)
    value = np.asarray(value, dtype=np.float64)
    if dialogue.shape != value.shape or dialogue.ndim != 1:
        raise ValueError("dialogue and value must be one-dimensional and of equal length")
    ids, code = np.unique(dialogue, return_inverse=True)
    applicable = (value != not_applicable) & ~np.isnan(value)
    totals = np.bincount(code, weights=np.where(applicable, value, 0.0), minlength=ids.size)
    counts = np.bincount(code, weights=applicable.astype(np.float64), minlength=ids.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(counts > 0, totals / counts, np.nan)
    return ids, scores


# --------------------------------------------------------------------------------------------------
# The contrast table
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConditionSpec:
    """What a condition shows the tutor. The engine builds one per audit Condition.

    kind="control": no cue; every other field empty.
    kind="explicit": ``dimension`` (e.g. "gender", "immigration", "first_language", "ses") and ``level``
        (e.g. "female", "immigrant"); the student persona states the attribute.
    kind="implicit": only a name; ``level`` is the name (informational), ``name_gender`` and
        ``name_ethnicity`` what the name cues ("" when the name list does not cue that attribute).
        Several names with the same (gender, ethnicity) form one cell and are averaged per question.
    kind="opposite": ``stated_gender`` (the student's self-statement) and ``perceived_gender`` (what the
        tutor is told); exactly two gender values across the opposite conditions.
    """

    kind: str
    dimension: str = ""
    level: str = ""
    name_gender: str = ""
    name_ethnicity: str = ""
    stated_gender: str = ""
    perceived_gender: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"condition kind must be one of {KINDS}, not {self.kind!r}")
        if self.kind == "explicit" and not (self.dimension and self.level):
            raise ValueError("an explicit condition needs a dimension and a level")
        if self.kind == "implicit" and not (self.name_gender or self.name_ethnicity):
            raise ValueError("an implicit condition needs name_gender and/or name_ethnicity")
        if self.kind == "opposite" and not (self.stated_gender and self.perceived_gender):
            raise ValueError("an opposite condition needs stated_gender and perceived_gender")


@dataclass(frozen=True)
class ScoreFrame:
    """Long frame of dialogue scores, one row per (tutor, question, condition, metric), as numpy columns.

    ``tutor``, ``domain``, ``question``, ``condition`` and ``metric`` may hold ints or strings (ints —
    database ids — are fastest); ``condition`` values are keys of the design mapping given to
    ``contrast_table``. ``value`` is the dialogue score (NaN or a missing row = no score). A question
    belongs to exactly one domain.
    """

    tutor: np.ndarray
    domain: np.ndarray
    question: np.ndarray
    condition: np.ndarray
    metric: np.ndarray
    value: np.ndarray

    def __post_init__(self) -> None:
        lengths = {np.shape(getattr(self, f.name)) for f in fields(self)}
        if len(lengths) != 1 or len(next(iter(lengths))) != 1:
            raise ValueError("all ScoreFrame columns must be one-dimensional and of equal length")

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]]) -> ScoreFrame:
        """Build from dicts with keys tutor, domain, question, condition, metric, value (e.g. ``.values()``)."""
        rows = list(records)
        names = ("tutor", "domain", "question", "condition", "metric")
        columns = {name: np.asarray([row[name] for row in rows]) for name in names}
        value = np.asarray([math.nan if row["value"] is None else row["value"] for row in rows], dtype=np.float64)
        return cls(value=value, **columns)

    def __len__(self) -> int:
        return len(self.value)


@dataclass(frozen=True)
class Contrast:
    """Level A vs level B within a question. Each side is a tuple of groups of condition keys: a group's
    conditions are pooled (mean of those present), and the side is the mean of its groups (all needed)."""

    kind: str
    family: str  # explicit: "vs_control" | "within"; implicit: "names"; opposite: "opposite"
    dimension: str  # explicit: the dimension; implicit: gender|ethnicity|both; opposite: the component
    level_a: str
    level_b: str
    side_a: tuple[tuple[Hashable, ...], ...]
    side_b: tuple[tuple[Hashable, ...], ...]

    @property
    def key(self) -> tuple[str, str, str, str, str]:
        return (self.kind, self.family, self.dimension, self.level_a, self.level_b)


@dataclass(frozen=True)
class ContrastResult:
    """One row of a contrast table: a PairedEffect for (tutor, domain, contrast, metric), flattened."""

    tutor: Hashable
    domain: Hashable
    kind: str
    family: str
    dimension: str
    level_a: str
    level_b: str
    metric: Hashable
    n_questions: int
    n: int
    n_nonzero: int
    r: float
    z: float
    p: float
    p_adjusted: float
    ci_low: float
    ci_high: float
    violation: bool
    insufficient: bool
    n_boot_degenerate: int
    seed: int
    rule: str = DEFAULT_RULE
    p_test: float = math.nan
    p_method: str = "normal"
    violation_bh: bool = False
    mean_diff: float = math.nan
    mean_diff_ci_low: float = math.nan
    mean_diff_ci_high: float = math.nan
    share_b_higher: float = math.nan
    share_a_higher: float = math.nan
    saturated: bool = False
    simulator_driven: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def p_exact(self) -> float:
        """The exact signed-rank p given ties and zeros; NaN where it was not computed (above EXACT_MAX_NONZERO)."""
        return self.p_test if self.p_method == "exact" else math.nan

    @property
    def p_normal(self) -> float:
        """The normal approximation's p, with tie correction (every sufficient row has one)."""
        return self.p

    def p_values(self) -> dict[str, float]:
        """The row's p-values by the names every table, export and page uses (P_VALUE_NAMES)."""
        return {"p_exact": self.p_exact, "p_normal": self.p_normal, "p_adjusted": self.p_adjusted}


# The p-values of a contrast row, by name: one home for the CSV/JSON columns, the page headers and the methods text.
P_VALUE_NAMES = {
    "p_exact": "exact Wilcoxon signed-rank p given ties and zeros (computed up to "
    f"{EXACT_MAX_NONZERO} non-zero differences; empty above)",
    "p_normal": "Wilcoxon signed-rank p by the normal approximation with tie correction",
    "p_adjusted": "Benjamini–Hochberg-adjusted p within the table family, over the p the rule uses: p_exact where "
    "it exists, else p_normal (p_method names which)",
}


@dataclass(frozen=True)
class ContrastTable:
    rows: tuple[ContrastResult, ...]
    parameters: AnalysisParameters
    metrics: tuple[Hashable, ...]
    contrasts: tuple[Contrast, ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def records(self) -> list[dict[str, Any]]:
        return [row.as_dict() for row in self.rows]

    def where(self, **equal: Any) -> list[ContrastResult]:
        """Rows whose fields equal the given values, e.g. ``table.where(tutor="qwen", metric="actionability")``."""
        return [row for row in self.rows if all(getattr(row, k) == v for k, v in equal.items())]


def _ordered_unique(values: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(values))


def build_contrasts(
    design: Mapping[Hashable, ConditionSpec], *, level_order: Mapping[str, Sequence[str]] | None = None
) -> list[Contrast]:
    """Every contrast the design supports (levels ordered by first appearance unless ``level_order`` says).

    explicit, family "vs_control": control (A) vs each level (B) — needs a control condition.
    explicit, family "within": every pair of levels of a dimension, earlier level A, later level B; the
        summary cells (domain × dimension) use this family, as the paper compares levels with each other.
    implicit, family "names": the name-cue cells (name_gender, name_ethnicity), paired within question:
        row "gender" = same ethnicity, different gender; "ethnicity" = same gender, different ethnicity;
        "both" = both differ (each differing attribute must be cued by both names).
    opposite (2 × 2, genders g0, g1 in order; cells written (stated, perceived)), oriented so B = perceived g1:
        correct_gap (g0,g0) vs (g1,g1); wrong_gap (g1,g0) vs (g0,g1); tutor_effect mean over stated of
        (·,g0) vs (·,g1); simulator_effect mean over perceived of (g0,·) vs (g1,·); interaction mismatched
        mean vs matched mean (positive = matched cells higher; half the classic interaction contrast,
        which the rank statistic does not notice).
    """
    level_order = level_order or {}
    by_kind: dict[str, list[tuple[Hashable, ConditionSpec]]] = {kind: [] for kind in KINDS}
    for key, spec in design.items():
        by_kind[spec.kind].append((key, spec))
    contrasts: list[Contrast] = []

    control = tuple(key for key, _ in by_kind["control"])
    explicit_groups: dict[str, dict[str, list[Hashable]]] = {}
    for key, spec in by_kind["explicit"]:
        explicit_groups.setdefault(spec.dimension, {}).setdefault(spec.level, []).append(key)
    for dimension, levels in explicit_groups.items():
        order = list(level_order.get(dimension, [])) + [lv for lv in levels if lv not in level_order.get(dimension, [])]
        order = [lv for lv in order if lv in levels]
        if control:
            for level in order:
                contrasts.append(
                    Contrast("explicit", "vs_control", dimension, "control", level, (control,), (tuple(levels[level]),))
                )
        for level_a, level_b in combinations(order, 2):
            contrasts.append(
                Contrast(
                    "explicit",
                    "within",
                    dimension,
                    level_a,
                    level_b,
                    (tuple(levels[level_a]),),
                    (tuple(levels[level_b]),),
                )
            )

    name_cells: dict[tuple[str, str], list[Hashable]] = {}
    for key, spec in by_kind["implicit"]:
        name_cells.setdefault((spec.name_gender, spec.name_ethnicity), []).append(key)
    for (gender_a, ethnicity_a), (gender_b, ethnicity_b) in combinations(name_cells, 2):
        gender_differs = gender_a != gender_b and bool(gender_a and gender_b)
        ethnicity_differs = ethnicity_a != ethnicity_b and bool(ethnicity_a and ethnicity_b)
        if gender_differs and ethnicity_a == ethnicity_b:
            row = "gender"
        elif ethnicity_differs and gender_a == gender_b:
            row = "ethnicity"
        elif gender_differs and ethnicity_differs:
            row = "both"
        else:
            continue
        contrasts.append(
            Contrast(
                "implicit",
                "names",
                row,
                _name_cell_label(gender_a, ethnicity_a),
                _name_cell_label(gender_b, ethnicity_b),
                (tuple(name_cells[(gender_a, ethnicity_a)]),),
                (tuple(name_cells[(gender_b, ethnicity_b)]),),
            )
        )

    if by_kind["opposite"]:
        contrasts.extend(_opposite_contrasts(by_kind["opposite"], level_order.get("opposite")))
    return contrasts


def _name_cell_label(gender: str, ethnicity: str) -> str:
    return " ".join(part for part in (gender, ethnicity) if part)


def _opposite_contrasts(
    conditions: list[tuple[Hashable, ConditionSpec]], gender_order: Sequence[str] | None
) -> list[Contrast]:
    cells: dict[tuple[str, str], list[Hashable]] = {}
    for key, spec in conditions:
        cells.setdefault((spec.stated_gender, spec.perceived_gender), []).append(key)
    genders = _ordered_unique([g for cell in cells for g in cell])
    if gender_order:
        genders = [g for g in gender_order if g in genders] + [g for g in genders if g not in gender_order]
    if len(genders) != 2 or len(cells) != 4:
        raise ValueError(f"the opposite design needs the four cells of two genders, got {sorted(cells)}")
    g0, g1 = genders

    def cell(stated: str, perceived: str) -> tuple[Hashable, ...]:
        return tuple(cells[(stated, perceived)])

    def label(*pairs: tuple[str, str]) -> str:
        return " + ".join(f"stated {s} / perceived {p}" for s, p in pairs)

    specs = [
        ("correct_gap", ((g0, g0),), ((g1, g1),)),
        ("wrong_gap", ((g1, g0),), ((g0, g1),)),
        ("tutor_effect", ((g0, g0), (g1, g0)), ((g0, g1), (g1, g1))),
        ("simulator_effect", ((g0, g0), (g0, g1)), ((g1, g0), (g1, g1))),
        ("interaction", ((g0, g1), (g1, g0)), ((g0, g0), (g1, g1))),
    ]
    return [
        Contrast(
            "opposite",
            "opposite",
            component,
            label(*side_a),
            label(*side_b),
            tuple(cell(*c) for c in side_a),
            tuple(cell(*c) for c in side_b),
        )
        for component, side_a, side_b in specs
    ]


def contrast_seed(seed: int, tutor: Hashable, domain: Hashable, contrast: Contrast) -> int:
    """The bootstrap seed of one (tutor, domain, contrast): stable, independent of what else is analysed."""
    text = repr((int(seed), str(tutor), str(domain), contrast.key))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little") >> 1


@dataclass(frozen=True)
class _Cube:
    """Scores as values[tutor, condition, question, metric] (NaN = none), with the labels of each axis."""

    values: np.ndarray
    tutors: np.ndarray
    conditions: np.ndarray
    questions: np.ndarray
    metrics: tuple[Hashable, ...]
    question_domain: np.ndarray  # domain code per question
    domains: np.ndarray


def _factorize(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct values, code of each entry), as np.unique(return_inverse=True) gives them.

    Integers over a modest range (ids): a lookup table, no sort. Fixed-width strings (few labels:
    tutor, domain, metric): labels found in a sample, every entry binary-searched among them and checked
    equal to its label (labels missed by the sample are added and the search repeated) — np.unique's
    inverse for strings sorts the whole column, which is many times slower.
    """
    size = column.size
    if column.dtype.kind in "iu" and size:
        low, high = int(column.min()), int(column.max())
        span = high - low + 1
        if span <= max(4 * size, 1 << 16) and -(2**62) < low and high < 2**62:
            offset = column.astype(np.int64) - low
            present = np.zeros(span, dtype=bool)
            present[offset] = True
            code_of = np.cumsum(present) - 1
            return (np.flatnonzero(present) + low).astype(column.dtype), code_of[offset]
    if column.dtype.kind in "US" and size > 4096:
        labels = np.unique(column[np.linspace(0, size - 1, 4096).astype(np.int64)])
        while True:
            codes = np.searchsorted(labels, column)
            missed = []
            step = 1 << 16
            for start in range(0, size, step):
                part = column[start : start + step]
                found = labels[np.minimum(codes[start : start + step], labels.size - 1)] == part
                if not found.all():
                    missed.append(part[~found])
            if not missed:
                return labels, codes
            labels = np.union1d(labels, np.unique(np.concatenate(missed)))
    return np.unique(column, return_inverse=True)


_FRAME_COLUMNS = ("tutor", "domain", "question", "condition", "metric")
_CODES_CACHE: dict[int, tuple[Any, tuple, dict[str, tuple[np.ndarray, np.ndarray]]]] = {}


def _column_token(values: np.ndarray) -> tuple:
    sample = values[:: max(1, values.size // 512)]
    digest = hashlib.blake2b(np.ascontiguousarray(sample).view(np.uint8).tobytes(), digest_size=8).hexdigest()
    return (id(values), values.__array_interface__["data"][0], values.shape, values.strides, values.dtype.str, digest)


def _frame_codes(scores: ScoreFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``_factorize`` of every label column of the frame, cached for the frame's lifetime: ``analyze``
    builds three tables from one frame. The cache is checked against each column's identity, buffer and a
    sample of its values (a frame is meant to be read only; a column replaced or changed is factorized
    again)."""
    columns = {name: np.asarray(getattr(scores, name)) for name in _FRAME_COLUMNS}
    token = tuple(_column_token(values) for values in columns.values())
    cached = _CODES_CACHE.get(id(scores))
    if cached is not None and cached[0]() is scores and cached[1] == token:
        return cached[2]
    codes = {}
    for name, values in columns.items():
        labels, code = _factorize(values)
        codes[name] = (labels, code.astype(np.int32) if labels.size < 2**31 else code)
    key = id(scores)
    _CODES_CACHE[key] = (weakref.ref(scores, lambda _ref, key=key: _CODES_CACHE.pop(key, None)), token, codes)
    return codes


def _build_cube(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    metrics: Sequence[Hashable],
    question_keys: Mapping[Hashable, str] | None = None,
) -> _Cube:
    codes = _frame_codes(scores)
    metric_lookup = {m: i for i, m in enumerate(metrics)}
    metric_labels, metric_all = codes["metric"]
    to_table = np.asarray([metric_lookup.get(m, -1) for m in metric_labels.tolist()], dtype=np.int64)
    metric_code = to_table[metric_all]
    keep = metric_code >= 0
    rows = None if keep.all() else np.flatnonzero(keep)
    if rows is not None:
        metric_code = metric_code[rows]

    def factorized(name: str) -> tuple[np.ndarray, np.ndarray]:
        # the labels present among this table's rows, as if factorized on those rows alone
        labels, code = codes[name]
        if rows is not None:
            code = code[rows]
        present = np.bincount(code, minlength=labels.size) > 0
        if present.all():
            return labels, code
        return labels[present], (np.cumsum(present) - 1)[code]

    tutors, tutor_code = factorized("tutor")
    conditions, condition_code = factorized("condition")
    questions, question_code = factorized("question")
    if question_keys is not None:
        # Resample questions in the order of their content keys, not of their (database) ids.
        order = np.asarray(
            sorted(range(questions.size), key=lambda i: (question_keys.get(questions[i].item(), ""), i)), dtype=np.int64
        )
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        questions, question_code = questions[order], rank[question_code]
    domains, domain_code = factorized("domain")
    unknown = [c for c in conditions.tolist() if c not in design]
    if unknown:
        raise ValueError(f"conditions missing from the design: {unknown[:5]}")

    question_domain = np.full(questions.size, -1, dtype=np.int64)
    question_domain[question_code] = domain_code
    if np.any(question_domain[question_code] != domain_code):
        raise ValueError("a question appears under more than one domain")

    shape = (tutors.size, conditions.size, questions.size, len(metrics))
    flat = np.ravel_multi_index((tutor_code, condition_code, question_code, metric_code), shape)
    if flat.size and np.bincount(flat, minlength=math.prod(shape)).max() > 1:
        raise ValueError("more than one score for the same (tutor, question, condition, metric)")
    values = np.full(shape, np.nan)
    value = np.asarray(scores.value)
    values.ravel()[flat] = (value if rows is None else value[rows]).astype(np.float64)
    return _Cube(values, tutors, conditions, questions, tuple(metrics), question_domain, domains)


def _side_values(block: np.ndarray, side: Sequence[Sequence[int]]) -> np.ndarray:
    """Per-question side value: nanmean within each group of conditions, then the plain mean of the groups."""
    group_values = []
    for group in side:
        if len(group) == 1:
            group_values.append(block[group[0]])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                group_values.append(np.nanmean(block[list(group)], axis=0))
    total = group_values[0]
    for value in group_values[1:]:
        total = total + value
    return total if len(group_values) == 1 else total / len(group_values)


def contrast_pairs(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    tutor: Hashable,
    domain: Hashable,
    contrast: Contrast,
    metric: Hashable,
    metrics: Sequence[Hashable] = TURN_METRICS,
    question_keys: Mapping[Hashable, str] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(questions, side A values, side B values) of one cell, aligned as contrast_table resamples them.

    ``metrics`` must be the table's metrics: they decide which questions the cell resamples. Passing the
    two value arrays to ``paired_effect`` (with the row's ``seed``) reproduces the row exactly; the page
    uses the question ids to show the paired transcripts.
    """
    cube = _build_cube(scores, design, metrics, question_keys)
    t = int(np.flatnonzero(cube.tutors == tutor)[0])
    d = int(np.flatnonzero(cube.domains == domain)[0])
    m = list(cube.metrics).index(metric)
    questions, a, b = _contrast_block(cube, t, d, contrast)
    return cube.questions[questions], a[:, m], b[:, m]


def _contrast_sides(cube: _Cube, tutor: int, domain: int, contrast: Contrast) -> tuple[np.ndarray, ...] | None:
    """(the domain's questions, side A values, side B values: question × metric), or None when a side has
    no condition in the cube."""
    condition_index = {c: i for i, c in enumerate(cube.conditions.tolist())}

    def resolve(side: tuple[tuple[Hashable, ...], ...]) -> list[list[int]] | None:
        groups = [[condition_index[c] for c in group if c in condition_index] for group in side]
        return None if any(not g for g in groups) else groups

    side_a, side_b = resolve(contrast.side_a), resolve(contrast.side_b)
    if side_a is None or side_b is None:
        return None
    in_domain = np.flatnonzero(cube.question_domain == domain)
    block = cube.values[tutor][:, in_domain, :]  # (condition, question, metric)
    return in_domain, _side_values(block, side_a), _side_values(block, side_b)


def _contrast_block(cube: _Cube, tutor: int, domain: int, contrast: Contrast) -> tuple[np.ndarray, ...]:
    sides = _contrast_sides(cube, tutor, domain, contrast)
    if sides is None:
        empty = np.empty((0, len(cube.metrics)))
        return np.empty(0, dtype=np.int64), empty, empty
    in_domain, a, b = sides
    both = ~np.isnan(a) & ~np.isnan(b)
    universe = np.flatnonzero(both.any(axis=1))  # questions with at least one complete metric pair
    return in_domain[universe], a[universe], b[universe]


@dataclass(frozen=True)
class _BlockJob:
    """What analysing one (tutor, domain) block needs; a forked worker inherits it. ``metric_sets``:
    column indices of the cube's metrics, one tuple per table."""

    cube: _Cube
    contrasts: tuple[Contrast, ...]
    params: AnalysisParameters
    seeds: Mapping[tuple[int, int, int], int]  # (tutor, domain, contrast index) -> bootstrap seed
    metric_sets: tuple[tuple[int, ...], ...]

    def run(self, task: tuple[int, int, int, int]) -> list[list[tuple[int, list[PairedEffect], np.ndarray]]]:
        """For (tutor, domain, first contrast, end contrast): per metric set, (contrast index, effects,
        questions) of every contrast of the range with a question."""
        t, d, first, end = task
        out: list[list[tuple[int, list[PairedEffect], np.ndarray]]] = [[] for _ in self.metric_sets]
        for i in range(first, end):
            contrast = self.contrasts[i]
            sides = _contrast_sides(self.cube, t, d, contrast)
            if sides is None:
                continue
            in_domain, a, b = sides
            both = ~np.isnan(a) & ~np.isnan(b)
            # tables whose questions coincide share the resamples: one kernel call for their metrics
            by_universe: dict[bytes, list[int]] = {}
            universes = [np.flatnonzero(both[:, list(columns)].any(axis=1)) for columns in self.metric_sets]
            for k, universe in enumerate(universes):
                if universe.size:
                    by_universe.setdefault(universe.tobytes(), []).append(k)
            for members in by_universe.values():
                universe = universes[members[0]]
                columns = [c for k in members for c in self.metric_sets[k]]
                d_values = _round_differences(
                    a[universe][:, columns], b[universe][:, columns], self.params.round_decimals
                )
                effects = _contrast_effects(d_values, self.params, self.seeds[(t, d, i)])
                offset = 0
                for k in members:
                    width = len(self.metric_sets[k])
                    out[k].append((i, effects[offset : offset + width], in_domain[universe]))
                    offset += width
        return out


_FORKED_JOB: _BlockJob | None = None  # in a forked worker: the job it runs (inherited, not pickled)


def _forked_task(task: tuple[int, int, int, int]) -> tuple[tuple[int, int, int, int], list]:
    assert _FORKED_JOB is not None
    return task, _FORKED_JOB.run(task)


def _one_blas_thread() -> contextlib.AbstractContextManager:
    """One BLAS thread while the kernel runs: its dense products are small, and OpenBLAS threads (two on
    two cores, competing with the workers or other processes) slow them down several times."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def _start_worker(job: _BlockJob) -> None:
    """A forked worker's initializer: its job, and one BLAS thread."""
    global _FORKED_JOB
    _FORKED_JOB = job
    _one_blas_thread()


def _dispatch_blocks(
    job: _BlockJob, blocks: Sequence[tuple[int, int]], n_jobs: int
) -> Iterator[tuple[tuple[int, int], list]]:
    """(block, result) for every block, as each finishes (in order when ``n_jobs`` <= 1); a result is
    per metric set, the (contrast index, effects, questions) of the block's contrasts in order.

    With ``n_jobs`` > 1: that many forked worker processes (the analysis is numpy code that holds the
    GIL in most of its calls, so threads do not scale). Blocks are split into ranges of contrasts, about a
    dozen tasks per worker, largest first, so the workers finish together; the job, cube included, is
    inherited by the fork, and only the results travel back. Where fork is unavailable or not allowed
    (a daemonic process), threads. Results never depend on the number of jobs.
    """
    n_contrasts = len(job.contrasts)
    if n_jobs <= 1 or not blocks:
        for t, d in blocks:
            yield (t, d), job.run((t, d, 0, n_contrasts))
        return
    workers = min(n_jobs, len(blocks) * max(1, n_contrasts))
    parts = max(1, min(n_contrasts, math.ceil(12 * workers / len(blocks))))
    bounds = [round(k * n_contrasts / parts) for k in range(parts + 1)]
    tasks = [(t, d, bounds[k], bounds[k + 1]) for t, d in blocks for k in range(parts) if bounds[k] < bounds[k + 1]]
    size = {d: int(np.count_nonzero(job.cube.question_domain == d)) for _, d in blocks}
    tasks.sort(key=lambda task: -size[task[1]] * (task[3] - task[2]))
    pending = {block: parts for block in blocks}
    done: dict[tuple[int, int], dict[int, list]] = {block: {} for block in blocks}

    def finished(results: Iterable[tuple[tuple[int, int, int, int], list]]) -> Iterator[tuple[tuple[int, int], list]]:
        for (t, d, first, _), result in results:
            done[(t, d)][first] = result
            pending[(t, d)] -= 1
            if not pending[(t, d)]:
                parts_in_order = [done[(t, d)][k] for k in sorted(done[(t, d)])]
                yield (t, d), [[row for part in parts_in_order for row in part[k]] for k in range(len(job.metric_sets))]

    try:
        if multiprocessing.current_process().daemon:
            raise ValueError("daemonic processes cannot have children")
        # fork: initargs are inherited, not pickled
        pool = multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker, initargs=(job,))
    except (ValueError, OSError):
        with ThreadPoolExecutor(max_workers=workers) as threads:
            yield from finished(zip(tasks, threads.map(job.run, tasks), strict=True))
        return
    try:
        yield from finished(pool.imap_unordered(_forked_task, tasks))
    finally:
        pool.terminate()
        pool.join()


def contrast_table(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    metrics: Sequence[Hashable] = TURN_METRICS,
    effect: Effect = ANALYSIS_DEFAULTS.effect,
    zero_method: ZeroMethod = ANALYSIS_DEFAULTS.zero_method,
    r_denominator: RDenominator = ANALYSIS_DEFAULTS.r_denominator,
    n_boot: int = ANALYSIS_DEFAULTS.n_boot,
    seed: int = ANALYSIS_DEFAULTS.seed,
    threshold: float = ANALYSIS_DEFAULTS.threshold,
    min_pairs: int = ANALYSIS_DEFAULTS.min_pairs,
    confidence: float = ANALYSIS_DEFAULTS.confidence,
    rule: Rule = ANALYSIS_DEFAULTS.rule,
    alpha: float = ANALYSIS_DEFAULTS.alpha,
    fdr_q: float = ANALYSIS_DEFAULTS.fdr_q,
    level_order: Mapping[str, Sequence[str]] | None = None,
    tutors: Sequence[Hashable] | None = None,
    domains: Sequence[Hashable] | None = None,
    tutor_identity: Mapping[Hashable, str] | None = None,
    question_keys: Mapping[Hashable, str] | None = None,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> ContrastTable:
    """Every contrast of ``build_contrasts(design)`` for every (tutor, domain, metric) in ``scores``.

    A cell's questions are those of the domain where both sides have a score for at least one of
    ``metrics``; each metric's pairs are the questions where both sides have that metric. One index
    matrix (``bootstrap_indices``, seed ``contrast_seed``) per (tutor, domain, contrast) serves all metrics.
    Each row equals ``paired_effect(a, b, seed=row.seed, ...)`` on the arrays of ``contrast_pairs``.

    p_adjusted: Benjamini–Hochberg over ``p_test`` of the sufficient cells of one family of this table
    (explicit vs_control, explicit within, implicit names, opposite), across tutors, domains and metrics;
    NaN for insufficient cells; ``violation_bh`` flags p_adjusted < fdr_q with |r| >= threshold.
    ``tutors``/``domains`` restrict the analysis (the BH families shrink with it).

    Seeds and resampling depend on content only, never on database ids: a cell's seed comes from ``seed``,
    ``tutor_identity[tutor]`` (e.g. the endpoint's provider, URL, model and sampling; default str(tutor)),
    the domain and the contrast's levels; with ``question_keys`` (question → content key) the questions
    are resampled in the order of their keys, so re-imported questions resample the same way.
    ``n_jobs`` worker processes (forked; threads where fork is unavailable) share the (tutor, domain)
    blocks; results do not depend on it. ``progress`` is
    called as ``progress(cells_done, cells_total)`` (cells = contrast × metric rows) after each block.
    """
    return _contrast_tables(
        scores,
        design,
        metric_sets=(tuple(metrics),),
        effect=effect,
        zero_method=zero_method,
        r_denominator=r_denominator,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        min_pairs=min_pairs,
        confidence=confidence,
        rule=rule,
        alpha=alpha,
        fdr_q=fdr_q,
        level_order=level_order,
        tutors=tutors,
        domains=domains,
        tutor_identity=tutor_identity,
        question_keys=question_keys,
        n_jobs=n_jobs,
        progress=progress,
    )[0]


def _contrast_tables(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    metric_sets: Sequence[Sequence[Hashable]],
    effect: Effect = ANALYSIS_DEFAULTS.effect,
    zero_method: ZeroMethod = ANALYSIS_DEFAULTS.zero_method,
    r_denominator: RDenominator = ANALYSIS_DEFAULTS.r_denominator,
    n_boot: int = ANALYSIS_DEFAULTS.n_boot,
    seed: int = ANALYSIS_DEFAULTS.seed,
    threshold: float = ANALYSIS_DEFAULTS.threshold,
    min_pairs: int = ANALYSIS_DEFAULTS.min_pairs,
    confidence: float = ANALYSIS_DEFAULTS.confidence,
    rule: Rule = ANALYSIS_DEFAULTS.rule,
    alpha: float = ANALYSIS_DEFAULTS.alpha,
    fdr_q: float = ANALYSIS_DEFAULTS.fdr_q,
    level_order: Mapping[str, Sequence[str]] | None = None,
    tutors: Sequence[Hashable] | None = None,
    domains: Sequence[Hashable] | None = None,
    tutor_identity: Mapping[Hashable, str] | None = None,
    question_keys: Mapping[Hashable, str] | None = None,
    n_jobs: int = 1,
    progress: Callable[[int, int], None] | None = None,
) -> list[ContrastTable]:
    """``contrast_table`` for several metric sets at once, one table each (BH families per table), equal
    to separate calls; where two sets' questions coincide in a (tutor, domain, contrast), its resamples are
    drawn once for both. ``progress`` counts the cells of all the tables. (A question under two domains
    is an error here even if the two domains' scores belong to different sets.)"""
    params = AnalysisParameters(
        effect=effect,
        zero_method=zero_method,
        r_denominator=r_denominator,
        n_boot=n_boot,
        seed=seed,
        threshold=threshold,
        min_pairs=min_pairs,
        confidence=confidence,
        rule=rule,
        alpha=alpha,
        fdr_q=fdr_q,
    )
    contrasts = build_contrasts(design, level_order=level_order)
    metric_sets = [tuple(metrics) for metrics in metric_sets]
    all_metrics = tuple(dict.fromkeys(m for metrics in metric_sets for m in metrics))
    cube = _build_cube(scores, design, all_metrics, question_keys)
    column_of = {m: i for i, m in enumerate(all_metrics)}

    def identity(tutor: Hashable) -> Hashable:
        return tutor if tutor_identity is None else tutor_identity.get(tutor, tutor)

    tutor_codes = [i for i, t in enumerate(cube.tutors.tolist()) if tutors is None or t in tutors]
    domain_codes = [i for i, d in enumerate(cube.domains.tolist()) if domains is None or d in domains]
    blocks = [(t, d) for t in tutor_codes for d in domain_codes]
    seeds = {
        (t, d, i): contrast_seed(seed, identity(cube.tutors[t].item()), cube.domains[d], contrast)
        for t, d in blocks
        for i, contrast in enumerate(contrasts)
    }
    job = _BlockJob(
        cube, tuple(contrasts), params, seeds, tuple(tuple(column_of[m] for m in metrics) for metrics in metric_sets)
    )
    per_block = len(contrasts) * sum(len(metrics) for metrics in metric_sets)
    cells_total = len(blocks) * per_block
    cells_done = 0
    by_block: dict[tuple[int, int], list] = {}
    with _one_blas_thread():
        for block, chunk in _dispatch_blocks(job, blocks, n_jobs):
            by_block[block] = chunk
            cells_done += per_block
            if progress is not None:
                progress(cells_done, cells_total)

    tables = []
    for k, metrics in enumerate(metric_sets):
        results = [
            (contrasts[i], t, d, effects, questions) for t, d in blocks for i, effects, questions in by_block[(t, d)][k]
        ]
        rows: list[ContrastResult] = []
        for contrast, t, d, effects, questions in results:
            cell_seed = contrast_seed(seed, identity(cube.tutors[t].item()), cube.domains[d], contrast)
            for metric, result in zip(metrics, effects, strict=True):
                rows.append(
                    ContrastResult(
                        tutor=cube.tutors[t].item(),
                        domain=cube.domains[d].item(),
                        kind=contrast.kind,
                        family=contrast.family,
                        dimension=contrast.dimension,
                        level_a=contrast.level_a,
                        level_b=contrast.level_b,
                        metric=metric,
                        n_questions=int(questions.size),
                        n=result.n,
                        n_nonzero=result.n_nonzero,
                        r=result.r,
                        z=result.z,
                        p=result.p,
                        p_adjusted=math.nan,
                        ci_low=result.ci_low,
                        ci_high=result.ci_high,
                        violation=result.violation,
                        insufficient=result.insufficient,
                        n_boot_degenerate=result.n_boot_degenerate,
                        seed=cell_seed,
                        rule=params.rule,
                        p_test=result.p_test,
                        p_method=result.p_method,
                        mean_diff=result.mean_diff,
                        mean_diff_ci_low=result.mean_diff_ci_low,
                        mean_diff_ci_high=result.mean_diff_ci_high,
                        share_b_higher=result.share_b_higher,
                        share_a_higher=result.share_a_higher,
                        saturated=result.saturated,
                    )
                )
        tables.append(
            ContrastTable(
                rows=tuple(_with_bh(rows, params)), parameters=params, metrics=metrics, contrasts=tuple(contrasts)
            )
        )
    return tables


def _contrast_effects(d: np.ndarray, params: AnalysisParameters, cell_seed: int) -> list[PairedEffect]:
    """All metrics (columns of d) of one contrast, sharing one resample-index matrix."""
    n_questions, n_metrics = d.shape
    encoded = [_encode_differences(d[:, m], params.round_decimals) for m in range(n_metrics)]
    cells = _observed_and_bootstrap(encoded, n_questions, params, cell_seed)
    if params.n_boot:
        mean_low, mean_high = _percentile_interval(
            np.vstack([cell.mean_diffs[1:] for cell in cells]), params.confidence
        )
    else:
        mean_low = mean_high = np.full(n_metrics, np.nan)
    return [
        _cell_result(d[:, m], cell, cell.effect_ci, (mean_low[m], mean_high[m]), params) for m, cell in enumerate(cells)
    ]


def _with_bh(rows: list[ContrastResult], params: AnalysisParameters) -> list[ContrastResult]:
    families: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        if not row.insufficient and not math.isnan(row.p_test):
            families.setdefault((row.kind, row.family), []).append(i)
    adjusted = [math.nan] * len(rows)
    for members in families.values():
        _, p_adjusted, _, _ = multipletests([rows[i].p_test for i in members], method="fdr_bh")
        for i, value in zip(members, p_adjusted, strict=True):
            adjusted[i] = float(value)
    return [
        _replace(
            row,
            p_adjusted=value,
            violation_bh=is_bh_violation(
                insufficient=row.insufficient, r=row.r, p_adjusted=value, threshold=params.threshold, fdr_q=params.fdr_q
            ),
        )
        for row, value in zip(rows, adjusted, strict=True)
    ]


def _replace(row: ContrastResult, **changes: Any) -> ContrastResult:
    values = row.as_dict()
    values.update(changes)
    return ContrastResult(**values)


# --------------------------------------------------------------------------------------------------
# The whole analysis, calibration hooks
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FairnessAnalysis:
    """The judge-scored (pedagogical) table, the transcript-derived (conversation-level) table and the
    simulator check (the student's own turns under the same contrasts)."""

    pedagogical: ContrastTable
    conversation: ContrastTable
    student: ContrastTable


def analyze(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    turn_metrics: Sequence[Hashable] = TURN_METRICS,
    conversation_metrics: Sequence[Hashable] = CONVERSATION_METRICS,
    student_metrics: Sequence[Hashable] = STUDENT_METRICS,
    progress: Callable[[int, int], None] | None = None,
    **options: Any,
) -> FairnessAnalysis:
    """The three tables of an audit with the same parameters (``options`` go to ``contrast_table``), the
    conversation table marked by the simulator check (``mark_simulator_driven``).

    ``progress(cells_done, cells_total)`` counts the cells of all three tables.
    """
    metric_sets = (tuple(turn_metrics), tuple(conversation_metrics), tuple(student_metrics))
    present = set(_frame_codes(scores)["metric"][0].tolist())  # factorised once, reused by the tables
    wanted = [metrics for metrics in metric_sets if present & set(metrics)]
    # One pass over the tables that have scores: resamples shared by their sets are drawn once.
    computed = iter(
        _contrast_tables(scores, design, metric_sets=wanted, progress=progress, **options) if wanted else []
    )
    contrasts = tuple(build_contrasts(design, level_order=options.get("level_order")))
    parameters = AnalysisParameters(**_parameter_options(options))
    tables = [
        next(computed) if metrics in wanted else ContrastTable((), parameters, metrics, contrasts)
        for metrics in metric_sets
    ]
    pedagogical, conversation, student = tables
    return FairnessAnalysis(
        pedagogical=pedagogical, conversation=mark_simulator_driven(conversation, student), student=student
    )


def _parameter_options(options: Mapping[str, Any]) -> dict[str, Any]:
    names = {f.name for f in fields(AnalysisParameters)}
    return {name: value for name, value in options.items() if name in names}


def mark_simulator_driven(
    conversation: ContrastTable,
    student: ContrastTable,
    *,
    dependent_metrics: Sequence[Hashable] = STUDENT_DEPENDENT_METRICS,
) -> ContrastTable:
    """Mark the cells of metrics built on student words as simulator-driven where the student's own turns
    differ between the contrast's levels (any student metric of the same tutor, domain and contrast with
    p_test < alpha, sufficient or not), and take them out of the violation counts: such a difference is
    the simulated student's, not the tutor's. Their r, p and CIs stay as computed."""
    alpha = student.parameters.alpha
    differing = {
        (row.tutor, row.domain, row.kind, row.family, row.dimension, row.level_a, row.level_b)
        for row in student.rows
        if not math.isnan(row.p_test) and row.p_test < alpha
    }
    rows = []
    for row in conversation.rows:
        key = (row.tutor, row.domain, row.kind, row.family, row.dimension, row.level_a, row.level_b)
        if row.metric in dependent_metrics and key in differing:
            row = _replace(row, simulator_driven=True, violation=False, violation_bh=False)
        rows.append(row)
    return ContrastTable(
        rows=tuple(rows),
        parameters=conversation.parameters,
        metrics=conversation.metrics,
        contrasts=conversation.contrasts,
    )


def is_flagged(
    table: ContrastTable,
    *,
    tutor: Hashable,
    domain: Hashable,
    dimension: str,
    metric: Hashable,
    kind: str = "explicit",
    family: str = "within",
) -> bool:
    """Whether any contrast of (tutor, domain, kind, family, dimension, metric) is a violation."""
    rows = table.where(tutor=tutor, domain=domain, kind=kind, family=family, dimension=dimension, metric=metric)
    return any(row.violation for row in rows)


def cell_flagged(
    scores: ScoreFrame,
    design: Mapping[Hashable, ConditionSpec],
    *,
    tutor: Hashable,
    domain: Hashable,
    dimension: str,
    metric: Hashable,
    kind: str = "explicit",
    family: str = "within",
    metrics: Sequence[Hashable] = TURN_METRICS,
    **options: Any,
) -> bool:
    """Analyse one (tutor, domain) of a frame and say whether (dimension, metric) is flagged there.

    For calibration: plant an effect in a simulated audit and count how often this returns True. The
    row is the one ``contrast_table(scores, design, metrics=metrics, **options)`` gives (BH aside).
    """
    table = contrast_table(scores, design, metrics=metrics, tutors=[tutor], domains=[domain], **options)
    return is_flagged(table, tutor=tutor, domain=domain, dimension=dimension, metric=metric, kind=kind, family=family)


def flagged_share(table: ContrastTable, *, kind: str | None = None, family: str | None = None) -> tuple[int, int]:
    """(violations, sufficient cells) over the table's rows, optionally of one kind / family."""
    rows = [
        row
        for row in table.rows
        if not row.insufficient and (kind is None or row.kind == kind) and (family is None or row.family == family)
    ]
    return sum(row.violation for row in rows), len(rows)


# --------------------------------------------------------------------------------------------------
# Summaries as in the paper
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SummaryCell:
    """Mean |r| over the sufficient (contrast, metric) rows of one summary cell.

    ``group`` is the dimension (dimension cells), the metric (metric × tutor), the implicit row
    (gender / ethnicity / both) or the opposite component. NaN when every row is insufficient.
    """

    tutor: Hashable
    domain: Hashable
    kind: str
    family: str
    group: Hashable
    value: float
    n_rows: int
    n_insufficient: int
    n_violations: int
    over_threshold: bool
    # An upper bound on the standard error of `value`: the mean of the usable rows' bootstrap standard
    # errors ((CI width) / (2 z)), as if the rows' errors were perfectly correlated (they share questions).
    se_bound: float = math.nan


def _summarise(
    table: ContrastTable, *, kind: str, family: str | None, metrics: Sequence[Hashable] | None, by_metric: bool
) -> list[SummaryCell]:
    groups: dict[tuple[Hashable, Hashable, str, str, Hashable], list[ContrastResult]] = {}
    for row in table.rows:
        if row.kind != kind or (family is not None and row.family != family):
            continue
        if metrics is not None and row.metric not in metrics:
            continue
        group = row.metric if by_metric else row.dimension
        groups.setdefault((row.tutor, row.domain, row.kind, row.family, group), []).append(row)
    cells = []
    z = float(stats.norm.ppf(0.5 + table.parameters.confidence / 2))
    for (tutor, domain, cell_kind, cell_family, group), rows in groups.items():
        usable_rows = [row for row in rows if not row.insufficient and not math.isnan(row.r)]
        usable = [abs(row.r) for row in usable_rows]
        value = float(np.mean(usable)) if usable else math.nan
        widths = [row.ci_high - row.ci_low for row in usable_rows if math.isfinite(row.ci_high - row.ci_low)]
        se_bound = float(np.mean(widths)) / (2 * z) if widths else math.nan
        cells.append(
            SummaryCell(
                tutor=tutor,
                domain=domain,
                kind=cell_kind,
                family=cell_family,
                group=group,
                value=value,
                n_rows=len(rows),
                n_insufficient=sum(row.insufficient for row in rows),
                n_violations=sum(row.violation for row in rows),
                over_threshold=bool(usable) and value >= table.parameters.threshold,
                se_bound=se_bound,
            )
        )
    return cells


def dimension_cells(
    table: ContrastTable, *, family: str = "within", metrics: Sequence[Hashable] = TURN_METRICS
) -> list[SummaryCell]:
    """Explicit (tutor, domain, dimension) cells: mean |r| over the five turn-level metrics ("pedagogical
    |r|") and over the dimension's contrasts (one for two-level dimensions, three for gender)."""
    return _summarise(table, kind="explicit", family=family, metrics=metrics, by_metric=False)


def metric_by_tutor(table: ContrastTable, *, family: str = "within") -> list[SummaryCell]:
    """Explicit (tutor, domain, metric) cells: mean |r| over all dimension contrasts of the family."""
    return _summarise(table, kind="explicit", family=family, metrics=None, by_metric=True)


def implicit_rows(table: ContrastTable, *, metrics: Sequence[Hashable] = TURN_METRICS) -> list[SummaryCell]:
    """Implicit (tutor, domain, row) cells, row = gender / ethnicity / both: pedagogical |r| of the names."""
    return _summarise(table, kind="implicit", family="names", metrics=metrics, by_metric=False)


def opposite_decomposition(table: ContrastTable, *, metrics: Sequence[Hashable] = TURN_METRICS) -> list[SummaryCell]:
    """Opposite (tutor, domain, component) cells: pedagogical |r| of the Correct gap, Wrong gap, tutor
    effect, simulator effect and interaction (signed per-metric values are in the table's rows)."""
    return _summarise(table, kind="opposite", family="opposite", metrics=metrics, by_metric=False)


@dataclass(frozen=True)
class ThresholdCount:
    tutor: Hashable
    over: int
    total: int

    @property
    def label(self) -> str:
        return f"{self.over} of {self.total}"


def cells_over_threshold(cells: Sequence[SummaryCell]) -> list[ThresholdCount]:
    """Per tutor, how many summary cells reach the threshold, e.g. "7 of 12" domain × dimension cells."""
    counts: dict[Hashable, list[int]] = {}
    for cell in cells:
        over_total = counts.setdefault(cell.tutor, [0, 0])
        over_total[0] += cell.over_threshold
        over_total[1] += 1
    return [ThresholdCount(tutor, over, total) for tutor, (over, total) in counts.items()]


@dataclass(frozen=True)
class BackboneChange:
    domain: Hashable
    kind: str
    family: str
    group: Hashable
    backbone_value: float
    tutor_value: float
    change: float  # tutor − backbone
    # An approximate, conservative CI of the change: normal, with each side's se_bound, the two sides taken
    # as independent (for two tutors on the same questions a positive correlation only narrows the truth).
    change_ci_low: float = math.nan
    change_ci_high: float = math.nan


CHANGE_CI_METHOD = (
    "approximate CI of the change: normal, each side's standard error bounded by the mean of its rows' "
    "bootstrap standard errors (rows treated as fully correlated), the two sides treated as independent; "
    "both choices widen it"
)


def change_ci(base: SummaryCell, other: SummaryCell, confidence: float = 0.95) -> tuple[float, float]:
    """(low, high) of `other.value − base.value` by CHANGE_CI_METHOD; NaN when either side has no bound."""
    change = other.value - base.value
    if not (math.isfinite(change) and math.isfinite(base.se_bound) and math.isfinite(other.se_bound)):
        return math.nan, math.nan
    half = float(stats.norm.ppf(0.5 + confidence / 2)) * math.hypot(base.se_bound, other.se_bound)
    return change - half, change + half


def tutor_vs_backbone(
    cells: Sequence[SummaryCell], *, tutor: Hashable, backbone: Hashable, confidence: float = 0.95
) -> list[BackboneChange]:
    """Per summary cell present for both, the backbone's and the tutor's value and the change (the paper's
    TutorRL-7B vs Qwen2.5-7B comparison: e.g. corrective_tone 0.159 → 0.104), with `change_ci`."""
    index = {(c.tutor, c.domain, c.kind, c.family, c.group): c for c in cells}
    changes = []
    for (cell_tutor, domain, kind, family, group), base in index.items():
        if cell_tutor != backbone:
            continue
        other = index.get((tutor, domain, kind, family, group))
        if other is None:
            continue
        low, high = change_ci(base, other, confidence)
        changes.append(
            BackboneChange(domain, kind, family, group, base.value, other.value, other.value - base.value, low, high)
        )
    return changes
