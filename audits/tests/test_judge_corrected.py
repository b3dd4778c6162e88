"""Judge-corrected contrasts: the PPI++ side estimates against ppi_py, the difference, the judge-only interval,
disagreement labels, the cue check, the planner and a small calibration run.

Reference: Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science 382 (2023), and
PPI++: Angelopoulos, Duchi, Zrnic, "PPI++: Efficient prediction-powered inference" (2023), as implemented by the
``ppi_py`` package (ppi-python 0.2.3): ``ppi_mean_pointestimate`` and ``ppi_mean_ci`` with ``lam=None``.
"""

import math
import subprocess
import sys
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from audits.judge_corrected import (
    CorrectedDifference,
    Interval,
    SideData,
    SideEstimate,
    corrected_difference,
    cue_check,
    disagreement,
    disagreement_sort_key,
    error_sd,
    judge_only_difference,
    kish_design_effect,
    labels_needed,
    power_tuned_lambda,
    side_estimate,
)
from audits.judge_corrected_simulation import (
    DOMAIN_MEANS,
    DOMAIN_SHARES,
    equal_allocation_probabilities,
    simulate_cell,
    stratum_sizes,
)

with warnings.catch_warnings():  # ppi_py's import silences all warnings otherwise (see audits.judge_corrected)
    from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

TOL = 1e-9
Z95 = stats.norm.ppf(0.975)


def fixed_side(seed: int, *, n_turns: int = 300, n_labelled: int = 40, bias: float = 0.3) -> tuple:
    """Judge scores on 1..5, a labelled subset with human scores and unequal inclusion probabilities."""
    rng = np.random.default_rng(seed)
    judge_all = rng.integers(1, 6, n_turns).astype(float)
    labelled = rng.choice(n_turns, n_labelled, replace=False)
    human = np.clip(judge_all[labelled] + rng.normal(bias, 0.8, n_labelled), 1, 5)
    probability = rng.choice([0.1, 0.2, 0.4], n_labelled)
    return judge_all, human, judge_all[labelled], probability


def ppi_py_side(judge_all, human, judge_labelled, weights, alpha=0.05):
    """ppi_py's estimate and CI for a side (lam=None); with weights, the CI of the scores less their judge mean."""
    estimate = np.asarray(ppi_mean_pointestimate(human, judge_labelled, judge_all, w=weights)).item()
    shift = judge_all.mean() if weights is not None else 0.0
    low, high = ppi_mean_ci(human - shift, judge_labelled - shift, judge_all - shift, alpha=alpha, w=weights)
    return estimate, np.asarray(low).item() + shift, np.asarray(high).item() + shift


def test_side_matches_ppi_py_without_weights():
    judge_all, human, judge_labelled, _ = fixed_side(1)
    result = side_estimate(SideData(judge_all, human, judge_labelled), alpha=0.05)
    estimate = np.asarray(ppi_mean_pointestimate(human, judge_labelled, judge_all)).item()
    low, high = (np.asarray(bound).item() for bound in ppi_mean_ci(human, judge_labelled, judge_all, alpha=0.05))
    assert result.interval.estimate == pytest.approx(estimate, abs=TOL)
    assert result.interval.ci_low == pytest.approx(low, abs=TOL)
    assert result.interval.ci_high == pytest.approx(high, abs=TOL)
    assert result.interval.se == pytest.approx((high - low) / (2 * Z95), abs=TOL)
    # The reported λ is ppi_py's: passing it back gives ppi_py's lam=None estimate.
    assert 0 < result.lam < 1
    again = np.asarray(ppi_mean_pointestimate(human, judge_labelled, judge_all, lam=result.lam)).item()
    assert again == pytest.approx(estimate, abs=TOL)
    assert (result.n_turns, result.n_labelled) == (300, 40)


def test_side_matches_ppi_py_with_weights():
    judge_all, human, judge_labelled, probability = fixed_side(2)
    weights = 1 / probability
    side = SideData(judge_all, human, judge_labelled, probability)
    result = side_estimate(side, alpha=0.1)
    estimate, low, high = ppi_py_side(judge_all, human, judge_labelled, weights, alpha=0.1)
    assert result.interval.estimate == pytest.approx(estimate, abs=TOL)
    assert result.interval.ci_low == pytest.approx(low, abs=TOL)
    assert result.interval.ci_high == pytest.approx(high, abs=TOL)
    assert power_tuned_lambda(side) == result.lam
    again = np.asarray(ppi_mean_pointestimate(human, judge_labelled, judge_all, lam=result.lam, w=weights)).item()
    assert again == pytest.approx(estimate, abs=TOL)
    # Centring changes only the weighted SE: the uncentred residual has mean (1 − λ)·mean(human) ≠ 0 and adds
    # about its square times var(w); ppi_py's uncentred interval is wider on this data.
    raw_low, raw_high = (np.asarray(b).item() for b in ppi_mean_ci(human, judge_labelled, judge_all, 0.1, w=weights))
    assert raw_high - raw_low > result.interval.ci_high - result.interval.ci_low


def test_side_estimate_and_se_follow_the_stated_formula():
    judge_all, human, judge_labelled, probability = fixed_side(3)
    result = side_estimate(SideData(judge_all, human, judge_labelled, probability))
    lam, n, big_n = result.lam, human.size, judge_all.size
    w = (1 / probability) / (1 / probability).sum() * n
    residual = human - lam * judge_labelled
    shift = judge_all.mean()
    estimate = lam * judge_all.mean() + np.mean(w * residual)
    variance = np.var(lam * judge_all) / big_n + np.var(w * residual - (1 - lam) * shift * w) / n
    assert result.interval.estimate == pytest.approx(estimate, abs=TOL)
    assert result.interval.se == pytest.approx(math.sqrt(variance), abs=TOL)


def test_difference_combines_the_sides_independently():
    a_all, a_human, a_labelled, a_probability = fixed_side(4, bias=0.2)
    b_all, b_human, b_labelled, b_probability = fixed_side(5, n_turns=280, n_labelled=35, bias=-0.3)
    for with_weights in (False, True):
        a = SideData(a_all, a_human, a_labelled, a_probability if with_weights else None)
        b = SideData(b_all, b_human, b_labelled, b_probability if with_weights else None)
        result = corrected_difference(a, b, alpha=0.05)
        est_a, low_a, high_a = ppi_py_side(a_all, a_human, a_labelled, 1 / a_probability if with_weights else None)
        est_b, low_b, high_b = ppi_py_side(b_all, b_human, b_labelled, 1 / b_probability if with_weights else None)
        se = math.sqrt(((high_a - low_a) / (2 * Z95)) ** 2 + ((high_b - low_b) / (2 * Z95)) ** 2)
        assert result.corrected.estimate == pytest.approx(est_b - est_a, abs=TOL)
        assert result.corrected.se == pytest.approx(se, abs=TOL)
        assert result.corrected.ci_low == pytest.approx(est_b - est_a - Z95 * se, abs=TOL)
        assert result.corrected.ci_high == pytest.approx(est_b - est_a + Z95 * se, abs=TOL)
        assert (result.side_a.n_labelled, result.side_b.n_labelled) == (40, 35)
        assert result.side_a.lam == power_tuned_lambda(a) and result.side_b.lam == power_tuned_lambda(b)
        assert result.alpha == 0.05


def test_judge_only_difference_is_the_classical_interval():
    a_all, a_human, a_labelled, _ = fixed_side(6)
    b_all, b_human, b_labelled, _ = fixed_side(7, n_turns=250)
    a, b = SideData(a_all, a_human, a_labelled), SideData(b_all, b_human, b_labelled)
    result = judge_only_difference(a, b, alpha=0.05)
    estimate = b_all.mean() - a_all.mean()
    se = np.sqrt(np.var(a_all) / a_all.size + np.var(b_all) / b_all.size)
    assert result.estimate == pytest.approx(estimate, abs=TOL)
    assert result.se == pytest.approx(se, abs=TOL)
    assert (result.ci_low, result.ci_high) == pytest.approx((estimate - Z95 * se, estimate + Z95 * se), abs=TOL)
    # Per side this is ppi_py's classical interval (ddof 0).
    low, high = classical_mean_ci(a_all, alpha=0.05)
    assert math.sqrt(np.var(a_all) / a_all.size) == pytest.approx((high - low) / (2 * Z95), abs=TOL)
    assert corrected_difference(a, b).judge_only == result


def _cell(low: float, high: float) -> CorrectedDifference:
    interval = Interval(estimate=(low + high) / 2, se=(high - low) / (2 * Z95), ci_low=low, ci_high=high)
    side = SideEstimate(interval=interval, lam=0.5, n_turns=10, n_labelled=5)
    return CorrectedDifference(corrected=interval, judge_only=interval, side_a=side, side_b=side, alpha=0.05)


def test_disagreement_labels_and_order():
    covers, excludes, excludes_below = _cell(-0.1, 0.3), _cell(0.05, 0.4), _cell(-0.5, -0.01)
    assert disagreement(True, covers) == "unsupported"
    assert disagreement(False, excludes) == "hidden"
    assert disagreement(False, excludes_below) == "hidden"
    assert disagreement(True, excludes) is None
    assert disagreement(False, covers) is None
    kinds = [None, "hidden", None, "unsupported"]
    assert sorted(kinds, key=disagreement_sort_key) == ["unsupported", "hidden", None, None]


def test_cue_check_flags_a_judge_harsher_on_side_b_only():
    cell = simulate_cell(11, judge="cue", cue_penalty=0.5, judge_noise_sd=0.8, labels_per_stratum=40)
    result = cue_check(cell.side_a, cell.side_b)
    assert result.cue_sensitive
    assert result.difference == pytest.approx(result.mean_error_b - result.mean_error_a)
    assert -0.8 < result.difference < -0.2
    errors_a = cell.side_a.judge_labelled - cell.side_a.human
    errors_b = cell.side_b.judge_labelled - cell.side_b.human
    assert result.p_value == pytest.approx(stats.ttest_ind(errors_b, errors_a, equal_var=False).pvalue)


def test_cue_check_flags_at_about_alpha_for_an_unbiased_noisy_judge_and_almost_always_for_a_cue_judge():
    unbiased = [simulate_cell(seed, judge="noisy", judge_noise_sd=0.8, labels_per_stratum=40) for seed in range(60)]
    harsher = [simulate_cell(seed, judge="cue", judge_noise_sd=0.8, labels_per_stratum=40) for seed in range(60)]
    # A 5 % test flags 3 of 60 on average; 8 or more has probability 1 %.
    assert sum(cue_check(cell.side_a, cell.side_b).cue_sensitive for cell in unbiased) <= 7
    assert sum(cue_check(cell.side_a, cell.side_b).cue_sensitive for cell in harsher) >= 58


def test_planner_formula_and_per_stratum_counts():
    plan = labels_needed(0.8, 0.8, 0.2, strata_a=4, strata_b=3)
    assert plan.per_side == math.ceil(Z95**2 * (0.64 + 0.64) / 0.04) == 123
    assert (plan.per_stratum_a, plan.per_stratum_b) == (31, 41)
    assert plan.predicted_half_width <= 0.2
    floor = labels_needed(0.8, 0.8, 0.2, n_turns_a=800, n_turns_b=800, judge_sd_a=1.0, judge_sd_b=1.0)
    assert floor.per_side > plan.per_side
    assert labels_needed(0.8, 0.8, 0.2, design_effect=1.2).per_side == math.ceil(Z95**2 * 1.2 * 1.28 / 0.04)


def test_planner_recommendation_reaches_the_target_half_width():
    target, questions = 0.25, 800
    pilot = simulate_cell(1_000, questions=questions, delta=0.4, judge="noisy", labels_per_stratum=60)
    sizes = stratum_sizes(questions)
    plan = labels_needed(
        error_sd(pilot.side_a.judge_labelled, pilot.side_a.human),
        error_sd(pilot.side_b.judge_labelled, pilot.side_b.human),
        target,
        strata_a=len(sizes),
        strata_b=len(sizes),
        design_effect=kish_design_effect(equal_allocation_probabilities(sizes, 1)),
        n_turns_a=questions,
        n_turns_b=questions,
        judge_sd_a=float(pilot.side_a.judge_all.std()),
        judge_sd_b=float(pilot.side_b.judge_all.std()),
    )
    for seed in range(10):
        cell = simulate_cell(seed, questions=questions, delta=0.4, judge="noisy", labels_per_stratum=plan.per_stratum_a)
        assert corrected_difference(cell.side_a, cell.side_b).corrected.half_width <= target


def test_error_sd_and_design_effect():
    judge, human = np.array([3.0, 4.0, 2.0, 5.0]), np.array([3.5, 3.0, 2.0, 4.0])
    assert error_sd(judge, human) == pytest.approx(np.std(judge - human, ddof=1))
    assert kish_design_effect([0.2, 0.2, 0.2]) == pytest.approx(1.0)
    assert kish_design_effect([0.1, 0.4]) == pytest.approx(2 * (100 + 6.25) / 12.5**2)


def test_refusals():
    judge_all, human, judge_labelled, probability = fixed_side(8)
    good = SideData(judge_all, human, judge_labelled, probability)
    one_label = SideData(judge_all, human[:1], judge_labelled[:1])
    with pytest.raises(ValueError, match="side A has 1 human-labelled turn"):
        corrected_difference(one_label, good)
    with pytest.raises(ValueError, match="side B has 0 human-labelled turn"):
        corrected_difference(good, SideData(judge_all, [], []))
    with pytest.raises(ValueError, match="at least 2"):
        cue_check(good, one_label)
    with pytest.raises(ValueError, match="differ in length"):
        SideData(judge_all, human, judge_labelled[:-1])
    with pytest.raises(ValueError, match="inclusion probabilities"):
        SideData(judge_all, human, judge_labelled, np.full(human.size, 1.5))
    with pytest.raises(ValueError, match="one value per labelled turn"):
        SideData(judge_all, human, judge_labelled, probability[:-1])
    with pytest.raises(ValueError, match="finite"):
        SideData(np.array([1.0, np.nan]), [1.0], [1.0])
    with pytest.raises(ValueError, match="alpha"):
        corrected_difference(good, good, alpha=1.5)
    with pytest.raises(ValueError, match="target_half_width"):
        labels_needed(0.8, 0.8, 0.0)
    with pytest.raises(ValueError, match="no number of labels"):
        labels_needed(0.8, 0.8, 0.05, n_turns_a=100, n_turns_b=100, judge_sd_a=1.0, judge_sd_b=1.0)
    with pytest.raises(ValueError, match="at least 2 pilot pairs"):
        error_sd([1.0], [2.0])


def test_simulated_coverage_stays_near_nominal():
    """A small version of benchmarks/judge_corrected_calibration.py: 40 seeds, loose bounds."""
    seeds = range(40)
    flagged = covered_zero = covered_delta = 0
    for seed in seeds:
        fair = simulate_cell(seed, judge="cue", cue_penalty=0.5, judge_noise_sd=0.5)
        result = corrected_difference(fair.side_a, fair.side_b)
        flagged += result.judge_only.excludes_zero
        covered_zero += result.corrected.ci_low <= 0 <= result.corrected.ci_high
        planted = simulate_cell(seed, delta=0.4, judge="noisy", labels_per_stratum=30)
        result = corrected_difference(planted.side_a, planted.side_b)
        covered_delta += result.corrected.ci_low <= 0.4 <= result.corrected.ci_high
    assert flagged >= 36
    assert covered_zero >= 34 and covered_delta >= 34


def test_importing_the_module_leaves_the_warning_filters_alone():
    """ppi_py's import calls warnings.simplefilter("ignore"); the module must not pass that on to its importer."""
    code = (
        "import warnings; import audits.judge_corrected; "
        "blanket = ('ignore', None, Warning, None, 0); "
        "assert blanket not in warnings.filters, warnings.filters[:3]"
    )
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr


def test_weights_remove_the_bias_of_over_sampled_small_domains():
    """Equal labels per domain over-sample the small domains, where the simulated judge's leniency differs."""
    shares, means = np.array(DOMAIN_SHARES), np.array(DOMAIN_MEANS)
    true_mean_a = 3 + float(shares @ means) / shares.sum()
    weighted, unweighted = [], []
    for seed in range(60):
        side = simulate_cell(seed, judge="noisy", labels_per_stratum=30).side_a
        weighted.append(side_estimate(side).interval.estimate - true_mean_a)
        unweighted.append(side_estimate(replace(side, inclusion_probability=None)).interval.estimate - true_mean_a)
    assert abs(np.mean(weighted)) < 0.02
    assert np.mean(unweighted) < -0.04


def test_a_side_whose_human_labels_are_all_one_value_is_not_read_as_a_gap():
    """With every human label of a side equal, the tuned λ drops to 0 and that side's SE with it: the corrected
    interval is a point, which would "exclude 0" and invent a hidden gap. Such a cell is shown, never classified."""
    rng = np.random.default_rng(7)
    a = SideData(rng.normal(1.0, 0.5, 200), np.full(8, 2.0), rng.normal(1.0, 0.5, 8))
    b = SideData(rng.normal(1.0, 0.5, 200), rng.normal(1.0, 0.5, 8), rng.normal(1.0, 0.5, 8))
    result = corrected_difference(a, b)
    assert result.constant_human_sides == ("A",) and not result.interval_estimable
    assert disagreement(False, result) is None and disagreement(True, result) is None
    varied = corrected_difference(replace(a, human=a.human + rng.normal(0, 0.3, 8)), b)
    assert varied.interval_estimable and varied.constant_human_sides == ()


def test_a_judge_only_cell_too_small_to_flag_is_never_called_a_hidden_gap():
    rng = np.random.default_rng(8)
    a = SideData(rng.normal(0.0, 0.3, 300), rng.normal(0.0, 0.3, 40), rng.normal(0.0, 0.3, 40))
    b = SideData(rng.normal(1.0, 0.3, 300), rng.normal(1.0, 0.3, 40), rng.normal(1.0, 0.3, 40))
    result = corrected_difference(a, b)
    assert result.corrected.excludes_zero
    assert disagreement(False, result) == "hidden"
    assert disagreement(False, result, judge_only_insufficient=True) is None


def test_a_judge_flag_whose_corrected_interval_lies_on_the_other_side_of_zero_is_unsupported():
    """The judge finds B lower; the humans find B higher: the corrected interval excludes 0, but not on the side the
    judge's flag claims, so the flag is not supported."""
    rng = np.random.default_rng(9)
    a = SideData(rng.normal(1.0, 0.3, 300), rng.normal(1.0, 0.3, 60), rng.normal(1.0, 0.3, 60))
    b = SideData(rng.normal(0.2, 0.3, 300), rng.normal(1.6, 0.3, 60), rng.normal(0.2, 0.3, 60))
    result = corrected_difference(a, b)
    assert result.judge_only.estimate < 0 < result.corrected.ci_low
    assert disagreement(True, result) == "unsupported"
    assert disagreement(False, result) == "hidden"
