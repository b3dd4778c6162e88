"""The Wilcoxon signed-rank kernel: one cell's result, the statistic from counts of tied |differences|, r's ceiling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from audits.analysis_parameters import ANALYSIS_DEFAULTS, ROUND_DECIMALS, AnalysisParameters

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
    parameters: AnalysisParameters = ANALYSIS_DEFAULTS,
    **overrides: Any,
) -> float:
    """The largest |r| = |Z|/sqrt(N) a cell with these paired differences (B − A; NaN = no pair) can reach.

    Its n, its zero differences and the tie groups of its |differences| stay as they are; every non-zero
    difference is given the same sign, which maximises R+ (= the sum of all non-zero ranks). Z is then
    computed with the same mean, variance and tie correction as the analysis (``_signed_rank_from_counts``,
    scipy's asymptotic Wilcoxon statistic without continuity correction), so a saturated cell's |r| equals
    its ceiling. Examples: n distinct non-zero differences give sqrt(1.5 (n + 1) / (2n + 1)) (→ 0.866);
    all tied give 1.0. NaN with no non-zero difference. Of ``parameters`` (``overrides`` change fields by name)
    it reads the zero method, N of r and rounding.
    """
    params = parameters.replaced(**overrides)
    d = np.round(np.asarray(differences, dtype=np.float64), params.round_decimals)
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
        zero_method=params.zero_method,
    )
    denominator = ranks.n_complete[0] if params.r_denominator == "all" else ranks.n_nonzero[0]
    return float(abs(ranks.z[0]) / math.sqrt(denominator))


# --------------------------------------------------------------------------------------------------
# Minimum detectable effect
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
