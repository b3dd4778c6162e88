"""The design preview's smallest detectable |r| is the larger of the test's and the rule's |r| threshold, and
the preview says when the threshold, not the data, decides."""

import math

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from audits.design import ANALYSIS_DEFAULTS, QuestionSelection, TutorPlan, family_power, flag_power, preview_design
from audits.fairness import AnalysisParameters, min_detectable_effect
from audits.tests.test_design_preview_power import paper_conditions
from audits.violation_rules import DEFAULT_THRESHOLD

# n at which the test's 80 %-power effect equals the threshold: ((z_0.975 + z_0.8) / threshold) ** 2
CROSSING = ((stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) / DEFAULT_THRESHOLD) ** 2


def test_the_threshold_has_one_home():
    assert AnalysisParameters().threshold == DEFAULT_THRESHOLD
    assert ANALYSIS_DEFAULTS.threshold == DEFAULT_THRESHOLD


def test_the_shown_effect_is_the_larger_of_the_test_s_and_the_threshold():
    assert 784 < CROSSING < 786  # 784.9 for |r| >= 0.10
    below = family_power("t", "d", "explicit", "within", 6, 784, family_size=60)
    assert not below.threshold_decides
    assert below.min_detectable_effect == below.test_min_detectable_effect == pytest.approx(min_detectable_effect(784))
    assert below.min_detectable_effect > DEFAULT_THRESHOLD
    above = family_power("t", "d", "explicit", "within", 6, 786, family_size=60)
    assert above.threshold_decides and above.test_min_detectable_effect < DEFAULT_THRESHOLD
    assert above.min_detectable_effect == DEFAULT_THRESHOLD
    at_900 = family_power("t", "d", "explicit", "within", 6, 900, family_size=60)
    assert at_900.min_detectable_effect == DEFAULT_THRESHOLD
    assert at_900.test_min_detectable_effect == pytest.approx(2.801585 / 30, abs=1e-6)


def test_at_n_900_and_r_009_the_test_flags_77_percent_but_the_rule_38():
    # by hand: Z ~ N(0.09 · 30, 1); the test needs |Z| >= 1.96, the rule also |Z| / 30 >= 0.10, i.e. |Z| >= 3
    test_alone = flag_power(900, 0.09, threshold=0.0)
    rule = flag_power(900, 0.09)
    assert test_alone == pytest.approx(stats.norm.cdf(2.7 - stats.norm.ppf(0.975)) + stats.norm.cdf(-2.7 - 1.959964))
    assert rule == pytest.approx(stats.norm.cdf(2.7 - 3.0) + stats.norm.cdf(-2.7 - 3.0))
    assert round(test_alone, 3) == 0.770 and round(rule, 3) == 0.382
    # the same by a seeded simulation of the normal statistic
    z = np.random.default_rng(29).normal(2.7, 1.0, 200_000)
    flagged_test = np.abs(z) >= stats.norm.ppf(0.975)
    assert flagged_test.mean() == pytest.approx(test_alone, abs=0.005)
    assert (flagged_test & (np.abs(z) / 30 >= DEFAULT_THRESHOLD)).mean() == pytest.approx(rule, abs=0.005)


def test_the_rule_s_own_80_percent_effect_lies_above_the_threshold_once_it_binds():
    row = family_power("t", "d", "explicit", "within", 6, 900, family_size=60)
    assert row.power_rule == pytest.approx(0.5, abs=1e-6)  # at |r| = threshold the observed |r| clears it half the time
    assert row.rule_min_detectable_effect == pytest.approx(DEFAULT_THRESHOLD + stats.norm.ppf(0.8) / 30)
    assert flag_power(900, row.rule_min_detectable_effect) == pytest.approx(0.8, abs=1e-6)
    assert row.rule_needs_more
    small = family_power("t", "d", "explicit", "within", 6, 100, family_size=60)
    assert small.power_rule == pytest.approx(0.8, abs=1e-4) and not small.rule_needs_more


def test_insufficient_and_unreachable_cells_have_no_power():
    few = family_power("t", "d", "explicit", "within", 6, 10, family_size=60)
    assert few.insufficient and few.power_rule is None and few.power_bh is None
    none = family_power("t", "d", "explicit", "within", 6, 0, family_size=60)
    assert none.min_detectable_effect is None and not none.detectable and not none.threshold_decides
    assert math.isnan(flag_power(0, 0.2))


def test_the_preview_rows_use_the_threshold():
    preview = preview_design(
        {"mathematics": list(range(1, 901)), "physics": list(range(901, 1101))},
        QuestionSelection(domains=("mathematics", "physics")),
        [TutorPlan("a")],
        paper_conditions(),
    )
    decides = {row.domain: row.threshold_decides for row in preview.power}
    assert decides == {"mathematics": True, "physics": False}
    assert {row.min_detectable_effect for row in preview.power if row.domain == "mathematics"} == {DEFAULT_THRESHOLD}


@pytest.mark.django_db
def test_the_preview_page_says_when_the_threshold_decides(researcher_client):
    from audits.tests.engine_factories import make_questions

    make_questions(790, "mathematics")
    make_questions(40, "physics")
    response = researcher_client.get(
        reverse("audits:design-preview"),
        {"domains": ["mathematics", "physics"], "mode": "all", "seed": 0, "tutors": 1, "subsampled_tutors": 0,
         "control": "on", "explicit_dimensions": ["gender"], "t_max": 10, "judge_attempts": 1},
    )  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert "the rule's threshold |r| ≥ 0.10" in html
    assert html.count("the threshold decides (the test alone: 0.10)") == 2  # 790 maths pairs: 0.0997 < 0.10
    physics = [row for row in response.context["preview"].power if row.domain == "physics"]
    assert physics and not any(row.threshold_decides for row in physics)
    assert f"{min_detectable_effect(40):.2f}" in html
