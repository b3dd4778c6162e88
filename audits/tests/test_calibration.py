"""Calibration of the violation rule on the simulation provider — a fast version of
benchmarks/calibration.py (whose 20-seed results are in benchmarks/RESULTS.md, "Calibration").

Every dialogue really runs through the engine's loop, the simulated tutor, student, reveal check and
judge (in memory, no database). A planted corrective-tone bias against non-English-L1 students of about
|r| = 0.3 must be flagged; a fair tutor's cells must not be flagged much more often than the nominal 5%.
"""

import pytest

from benchmarks.calibration import binomial_bound, null_run, power_run

# Whole audits through the engine loop: the full suite runs them, `make test-fast` does not.
pytestmark = pytest.mark.slow


def test_a_planted_effect_of_about_r_0_3_is_flagged_in_every_seed():
    runs = [power_run(seed=seed, n_questions=300) for seed in range(3)]
    assert all(run.flagged for run in runs), [(run.seed, run.r, run.ci_low, run.ci_high) for run in runs]
    assert all(run.n >= 200 for run in runs)
    mean_r = sum(run.r for run in runs) / len(runs)
    assert -0.45 < mean_r < -0.25  # about |r| = 0.3, in the planted direction (B = non-English L1 lower)


def test_a_fair_tutor_is_flagged_at_about_the_nominal_rate():
    runs = [null_run(seed=seed, n_questions=100) for seed in range(4)]
    flagged = sum(run.flagged for run in runs)
    cells = sum(run.cells for run in runs)
    assert cells == 4 * 15 * 5  # (9 vs control + 6 level-vs-level contrasts) × 5 metrics per seed
    share, _, bound = binomial_bound(flagged, cells)
    assert share <= bound, f"{flagged} of {cells} null cells flagged ({share:.1%} > {bound:.1%})"
    assert flagged > 0  # a rule that never flags anything would pass the line above for the wrong reason


def test_the_calibrated_rule_holds_its_false_flag_rate_at_small_n_where_the_papers_does_not():
    # A fast slice of the shapes study (benchmarks/RESULTS.md, calibration set 2: 4,000 cells per n).
    from benchmarks.calibration import null_shapes_study

    study = null_shapes_study(18, 400, n_boot=1000)
    share, _, bound = binomial_bound(study.calibrated, study.cells)
    assert share <= bound, f"{study.calibrated} of {study.cells} null cells flagged at n = 18"
    assert study.paper >= study.calibrated  # the calibrated rule is the paper's plus a test
    assert study.exact_used == study.cells  # at n = 18 every p is the exact one
