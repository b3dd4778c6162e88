"""The insufficient and violation rules, and the handling of all-tied samples and resamples."""

import math

import numpy as np

from audits.fairness import paired_effect


def test_fewer_than_fifteen_pairs_is_insufficient_and_never_a_violation():
    a = np.zeros(14)
    b = np.ones(14)  # a huge effect, but too few pairs
    result = paired_effect(a, b)
    assert result.insufficient and not result.violation
    assert result.r == 1.0
    assert not paired_effect(np.zeros(15), np.ones(15)).insufficient


def test_missing_scores_do_not_count_as_pairs():
    a = np.zeros(20)
    b = np.ones(20)
    b[:6] = np.nan
    result = paired_effect(a, b)
    assert result.n == 14 and result.insufficient


def _random_cells(count: int):
    rng = np.random.default_rng(2)
    for trial in range(count):
        n = int(rng.integers(10, 60))
        shift = rng.choice([0, 0.3, 1.0])
        a = rng.integers(0, 3, n).astype(float)
        b = np.clip(a + rng.normal(shift, 1.0, n).round(), 0, 2)
        yield trial, a, b


def test_paper_rule_needs_ci_excluding_zero_and_effect_over_threshold():
    seen = set()
    for trial, a, b in _random_cells(60):
        result = paired_effect(a, b, n_boot=300, seed=trial, rule="paper")
        rule = result.n >= 15 and (result.ci_low > 0 or result.ci_high < 0) and abs(result.r) >= 0.10
        assert result.violation == rule
        seen.add(result.violation)
    assert seen == {True, False}


def test_calibrated_rule_also_needs_the_test_and_is_never_looser_than_the_paper_rule():
    seen = set()
    for trial, a, b in _random_cells(60):
        result = paired_effect(a, b, n_boot=300, seed=trial)
        paper = paired_effect(a, b, n_boot=300, seed=trial, rule="paper")
        assert result.parameters.rule == "calibrated"
        assert result.violation == (paper.violation and result.p_test < 0.05)
        assert result.p_method == ("exact" if result.n_nonzero <= 100 else "normal")
        seen.add((paper.violation, result.violation))
    # some cells pass the paper's rule but not the test (the percentile interval is too narrow at small n)
    assert {(True, True), (True, False), (False, False)} <= seen


def test_saturated_cell_reports_mean_difference_and_shares():
    a = np.zeros(30)
    b = np.r_[np.full(20, 0.5), np.zeros(10)]
    result = paired_effect(a, b, seed=3)
    assert result.saturated and result.share_b_higher == 20 / 30 and result.share_a_higher == 0
    assert result.mean_diff == 10 / 30
    assert 0 < result.mean_diff_ci_low < result.mean_diff < result.mean_diff_ci_high


def test_threshold_and_min_pairs_are_parameters():
    a = np.zeros(30)
    b = np.r_[np.ones(20), np.zeros(10)]
    assert paired_effect(a, b).violation
    assert not paired_effect(a, b, threshold=0.99).violation
    flagged = paired_effect(a, b, min_pairs=31)
    assert flagged.insufficient and not flagged.violation
    assert flagged.parameters.min_pairs == 31


def test_all_tied_sample_is_no_effect_and_degenerate_resamples_are_zero():
    tied = paired_effect(np.ones(20), np.ones(20))
    assert (tied.r, tied.z, tied.p) == (0.0, 0.0, 1.0)
    assert (tied.ci_low, tied.ci_high) == (0.0, 0.0)
    assert tied.n_boot_degenerate == 2000 and not tied.violation

    # one non-zero difference among 20: most resamples miss it; they count as effect 0
    b = np.ones(20)
    b[0] = 2
    sparse_effect = paired_effect(np.ones(20), b, n_boot=1000, seed=1)
    expected_missing = 1000 * (19 / 20) ** 20  # P(question 0 never drawn) = (19/20)^20 ≈ 0.358
    assert abs(sparse_effect.n_boot_degenerate - expected_missing) < 60
    assert sparse_effect.ci_low == 0.0


def test_no_complete_pair_is_nan():
    result = paired_effect(np.full(5, np.nan), np.ones(5))
    assert result.n == 0 and math.isnan(result.r) and result.insufficient
