"""The exact two-sided p-value of the Wilcoxon signed-rank test given the observed ranks, ties and zeros.

Under the null hypothesis (the two levels are exchangeable within a question) every non-zero paired
difference is equally likely to be positive or negative, whatever its size, so conditional on the
observed absolute ranks the statistic R+ = sum of the ranks of the positive differences has a known
distribution: a sum of independent rank × Bernoulli(1/2) terms. Tied differences share a mid-rank, which
is a half-integer at worst, so on doubled ranks the distribution lives on the integers and is built by
one shift-and-add per non-zero difference (O(n³) at worst, a millisecond at n = 100).

scipy.stats.wilcoxon's own exact method refuses ties and zeros (it falls back to the normal
approximation), and dialogue scores are full of both; the normal approximation is anti-conservative at
the small n an audit often has (measured in benchmarks/calibration.py), hence this module. Pure numpy.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

# Above this many non-zero differences the normal approximation (with tie correction) is used instead:
# its false-positive rate is within the binomial noise of 5 % there (benchmarks/RESULTS.md, calibration).
EXACT_MAX_NONZERO = 100


def signed_rank_exact_p(d: np.ndarray, zero_method: str = "pratt") -> float:
    """Exact two-sided p of the signed-rank statistic for the (rounded) differences ``d`` (NaN = no pair).

    ``zero_method`` as in scipy: "pratt" ranks the zeros with the others and drops their ranks, "wilcox"
    drops the zeros before ranking, "zsplit" ranks them and splits their ranks evenly between the signs
    (a constant shift of R+, so its p equals Pratt's). With no non-zero difference, p = 1.
    """
    d = np.asarray(d, dtype=np.float64)
    d = d[~np.isnan(d)]
    if zero_method == "wilcox":
        d = d[d != 0]
    ranks = stats.rankdata(np.abs(d))
    nonzero = d != 0
    if not nonzero.any():
        return 1.0
    doubled = np.rint(2 * ranks[nonzero]).astype(np.int64)
    positive = d[nonzero] > 0
    observed = int(doubled[positive].sum())
    centre = doubled.sum() / 2

    values, counts = np.unique(doubled, return_counts=True)
    distribution = np.zeros(int(doubled.sum()) + 1)
    distribution[0] = 1.0
    top = 0
    for value, count in zip(values.tolist(), counts.tolist(), strict=True):
        for _ in range(count):
            # Each difference adds 0 or its doubled rank with probability 1/2.
            shifted = distribution[: top + 1].copy()
            distribution[: top + 1] *= 0.5
            distribution[value : value + top + 1] += 0.5 * shifted
            top += value
    support = np.arange(distribution.size)
    # Values of the statistic at least as far from its centre as the observed one (the tolerance only
    # absorbs rounding: deviations are multiples of 1/2).
    extreme = np.abs(support - centre) >= abs(observed - centre) - 1e-9
    return float(min(1.0, distribution[extreme].sum()))
