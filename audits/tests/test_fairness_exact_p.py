"""The exact signed-rank p (audits.exact_signed_rank) against scipy: its exact method without ties and
zeros, and an exhaustive sign-flip permutation test with them."""

import numpy as np
import pytest
from scipy import stats

from audits.exact_signed_rank import signed_rank_exact_p


@pytest.mark.parametrize("n", [5, 9, 16, 25])
def test_equals_scipy_exact_without_ties(n):
    d = np.random.default_rng(n).normal(0.4, 1, n)
    assert signed_rank_exact_p(d) == pytest.approx(stats.wilcoxon(d, method="exact").pvalue, rel=1e-12)


def _pratt_statistic(x, axis=-1):
    ranks = stats.rankdata(np.abs(x), axis=axis)  # zeros ranked with the rest, then contribute nothing
    return np.sum(ranks * (x > 0), axis=axis)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_exhaustive_sign_flips_with_ties_and_zeros(seed):
    # dialogue-score-like differences: halves and thirds, many zeros and ties
    d = np.random.default_rng(seed).choice([-1, -0.5, 0, 0, 0, 0.5, 1, 1.5], 13)
    exhaustive = stats.permutation_test(
        (d,), _pratt_statistic, permutation_type="samples", n_resamples=np.inf, alternative="two-sided"
    )
    assert signed_rank_exact_p(d) == pytest.approx(exhaustive.pvalue, rel=1e-9)


def test_no_nonzero_difference_and_missing_pairs():
    assert signed_rank_exact_p(np.zeros(20)) == 1.0
    d = np.r_[np.ones(8), np.full(4, np.nan)]
    assert signed_rank_exact_p(d) == pytest.approx(2 / 2**8)
