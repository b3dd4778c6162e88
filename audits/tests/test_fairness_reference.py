"""paired_effect against published reference values and against scipy's own implementations."""

import numpy as np
import pytest
from scipy import stats

from audits.fairness import paired_effect

# Darwin's Zea mays data (cross- minus self-fertilised plant heights, eighths of an inch), as given in the
# Examples of scipy.stats.wilcoxon's documentation (scipy 1.17), after Fisher's "The Design of Experiments".
DARWIN_DIFFERENCES = np.array([6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75], dtype=float)


def test_darwin_normal_approximation_z_and_r():
    result = paired_effect(np.zeros(15), DARWIN_DIFFERENCES, n_boot=0)
    # R+ = 96, R- = 24, mean 60, sd sqrt(310): Z = 36 / 17.6068 = 2.0447; r = Z / sqrt(15) = 0.5279.
    assert result.z == pytest.approx(2.0447, abs=5e-5)
    assert result.r == pytest.approx(0.5279, abs=5e-5)
    # scipy's documented asymptotic p-value for these data
    assert result.p == pytest.approx(0.04088813291185591, rel=1e-12)
    assert result.n == 15 and result.n_nonzero == 15


def test_darwin_rank_biserial():
    # (R+ - R-) / (n (n + 1) / 2) = (96 - 24) / 120 = 0.600 (Kerby's simple difference formula)
    result = paired_effect(np.zeros(15), DARWIN_DIFFERENCES, effect="rank_biserial", n_boot=0)
    assert result.r == pytest.approx(0.600, abs=1e-12)


def test_sign_follows_b_minus_a():
    assert paired_effect(DARWIN_DIFFERENCES, np.zeros(15), n_boot=0).r == pytest.approx(-0.5279, abs=5e-5)


LIKERT_A = np.array([3, 4, 2, 5, 3, 3, 1, 4, 2, 5, 3, 4, 4, 2, 3, 5, 1, 3, 4, 2], dtype=float)
LIKERT_B = np.array([4, 4, 3, 5, 2, 4, 3, 4, 2, 4, 5, 4, 5, 3, 3, 5, 2, 4, 4, 4], dtype=float)


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
def test_likert_with_zeros_and_ties_matches_scipy_bit_for_bit(zero_method):
    differences = LIKERT_B - LIKERT_A
    assert np.count_nonzero(differences == 0) == 8  # zeros and heavy ties are the point of this vector
    expected = stats.wilcoxon(differences, zero_method=zero_method, method="approx")
    result = paired_effect(LIKERT_A, LIKERT_B, zero_method=zero_method, n_boot=0)
    assert abs(result.z) == abs(expected.zstatistic)
    assert result.p == expected.pvalue


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
def test_random_likert_means_match_scipy_bit_for_bit(zero_method):
    rng = np.random.default_rng(5)
    for _ in range(100):
        n = int(rng.integers(3, 80))
        # dialogue-score-like values: means of 0/1/2 over 1..4 turns, so differences tie after rounding
        a = rng.integers(0, 9, n) / rng.integers(1, 5, n)
        b = rng.integers(0, 9, n) / rng.integers(1, 5, n)
        differences = np.round(b - a, 9)
        if not np.any(differences != 0):
            continue
        expected = stats.wilcoxon(differences, zero_method=zero_method, method="approx")
        result = paired_effect(a, b, zero_method=zero_method, n_boot=0)
        assert abs(result.z) == abs(expected.zstatistic)
        assert result.p == expected.pvalue


def test_rounding_makes_equal_differences_tie():
    a = np.array([0.4, 0.0] * 10)
    b = np.array([0.7, 0.3] * 10)  # 0.7 - 0.4 != 0.3 in floating point, but both differences are 0.3
    result = paired_effect(a, b, effect="rank_biserial", n_boot=0)
    assert result.r == 1.0
    assert result.z == pytest.approx(np.sqrt(20))  # all differences tied and positive: Z = sqrt(n)


@pytest.mark.parametrize("effect", ["r", "rank_biserial"])
def test_bootstrap_interval_equals_scipy_bootstrap_with_same_seed(effect):
    rng = np.random.default_rng(11)
    a = rng.integers(0, 5, 40) / 2
    b = np.clip(a + rng.integers(-1, 3, 40) / 2, 0, 2)
    a[[3, 17]] = np.nan  # missing scores: a resample keeps its complete pairs

    def statistic(x, y):
        d = np.round(y - x, 9)
        d = d[~np.isnan(d)]
        if not np.any(d != 0):
            return 0.0
        if effect == "rank_biserial":
            ranks = stats.rankdata(np.abs(d))
            return (ranks[d > 0].sum() - ranks[d < 0].sum()) / (d.size * (d.size + 1) / 2)
        z = stats.wilcoxon(d, zero_method="pratt", alternative="greater", method="approx").zstatistic
        return z / np.sqrt(d.size)

    expected = stats.bootstrap(
        (a, b), statistic, paired=True, vectorized=False, n_resamples=400, method="percentile", rng=3
    )
    result = paired_effect(a, b, effect=effect, n_boot=400, seed=3)
    if effect == "r":
        assert result.ci_low == expected.confidence_interval.low
        assert result.ci_high == expected.confidence_interval.high
    else:  # the rank-biserial reference above sums ranks in another order: equal to rounding only
        assert result.ci_low == pytest.approx(expected.confidence_interval.low, abs=1e-12)
        assert result.ci_high == pytest.approx(expected.confidence_interval.high, abs=1e-12)
