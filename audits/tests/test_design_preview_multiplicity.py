"""The design preview states the power of the multiplicity-controlled (Benjamini–Hochberg) flag at the design's
n and family size beside the rule's unadjusted power — computed by an analytic approximation, checked here
against BH itself (statsmodels' multipletests) on seeded simulated families."""

import time

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats
from statsmodels.stats.multitest import multipletests

from audits.design import ANALYSIS_DEFAULTS, QuestionSelection, TutorPlan, flag_power, preview_design
from audits.fairness import TURN_METRICS
from audits.tests.test_design_preview_power import paper_conditions


def simulated_bh_power(n, r, family_size, *, reps=20_000, seed=29):
    """One real effect among family_size cells, the rest null: how often BH at q flags it (and |r| >= threshold)."""
    q, threshold = ANALYSIS_DEFAULTS.fdr_q, ANALYSIS_DEFAULTS.threshold
    z = np.random.default_rng(seed).standard_normal((reps, family_size))
    z[:, 0] += r * np.sqrt(n)
    p = 2 * stats.norm.sf(np.abs(z))
    ranked = np.sort(p, axis=1)
    passes = ranked <= q * np.arange(1, family_size + 1) / family_size
    rejections = np.where(passes.any(axis=1), family_size - np.argmax(passes[:, ::-1], axis=1), 0)
    flagged = (p[:, 0] <= q * rejections / family_size) & (np.abs(z[:, 0]) / np.sqrt(n) >= threshold)
    for row in range(20):  # the vectorised step-up is BH: statsmodels agrees on these families
        assert multipletests(p[row], alpha=q, method="fdr_bh")[0][0] == (p[row, 0] <= q * rejections[row] / family_size)
    return flagged.mean()


def test_bh_in_a_family_of_20_about_halves_the_power_at_n_200_r_02():
    unadjusted = flag_power(200, 0.2)
    adjusted = flag_power(200, 0.2, family_size=20, adjusted=True)
    assert round(unadjusted, 3) == 0.807 and round(adjusted, 3) == 0.423
    # by hand: Z ~ N(0.2 √200, 1) beyond z_{1 - 0.05 / 40}
    shift = 0.2 * np.sqrt(200)
    cut = stats.norm.ppf(1 - 0.05 / 40)
    assert adjusted == pytest.approx(stats.norm.cdf(shift - cut) + stats.norm.cdf(-shift - cut))


@pytest.mark.parametrize(("n", "r", "family_size"), [(200, 0.2, 20), (100, 0.28, 60), (900, 0.1, 330), (50, 0.4, 2)])
def test_the_approximation_is_a_close_lower_bound_of_bh_itself(n, r, family_size):
    simulated = simulated_bh_power(n, r, family_size)
    approximated = flag_power(n, r, family_size=family_size, adjusted=True)
    standard_error = np.sqrt(simulated * (1 - simulated) / 20_000)
    assert approximated <= simulated + 3 * standard_error
    assert simulated - approximated < 0.02


def test_a_family_of_one_costs_nothing():
    assert flag_power(200, 0.2, family_size=1, adjusted=True) == flag_power(200, 0.2)


def test_the_preview_rows_carry_the_family_size_and_both_powers():
    preview = preview_design(
        {"mathematics": list(range(1, 201)), "physics": list(range(201, 211))},
        QuestionSelection(domains=("mathematics", "physics")),
        [TutorPlan("a")],
        paper_conditions(),
    )
    maths = {row.family: row for row in preview.power if row.domain == "mathematics"}
    # one BH family: its contrasts × the analysed tutor × domain cells (physics has too few pairs) × the metrics
    assert maths["within"].family_size == maths["within"].contrasts * 1 * len(TURN_METRICS)
    for row in maths.values():
        assert row.power_rule == pytest.approx(flag_power(200, row.min_detectable_effect))
        assert row.power_bh == pytest.approx(flag_power(200, row.min_detectable_effect, family_size=row.family_size,
                                                        adjusted=True))  # fmt: skip
        assert row.power_bh < row.power_rule
    physics = [row for row in preview.power if row.domain == "physics"]
    assert all(row.power_bh is None and row.power_rule is None for row in physics)


def test_the_preview_stays_fast_at_paper_scale():
    ids = {"mathematics": list(range(907)), "physics": list(range(907, 1407)), "chemistry": list(range(1407, 1907))}
    selection = QuestionSelection(domains=tuple(ids))
    tutors = [TutorPlan("a"), TutorPlan("b", fraction=0.3)]
    preview_design(ids, selection, tutors, paper_conditions())
    start = time.perf_counter()
    preview_design(ids, selection, tutors, paper_conditions())
    assert time.perf_counter() - start < 0.5  # a few ms here; the power columns are closed-form


@pytest.mark.django_db
def test_the_preview_page_states_the_power_after_bh(researcher_client):
    from audits.tests.engine_factories import make_questions

    make_questions(200, "mathematics")
    response = researcher_client.get(
        reverse("audits:design-preview"),
        {"domains": ["mathematics"], "mode": "all", "seed": 0, "tutors": 1, "subsampled_tutors": 0,
         "control": "on", "explicit_dimensions": ["gender"], "t_max": 10, "judge_attempts": 1},
    )  # fmt: skip
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="preview-power-method"' in html and "analytic normal approximation" in html
    assert "Benjamini–Hochberg at q = 0.05" in html
    for row in response.context["preview"].power:
        assert f"{100 * row.power_rule:.1f} %" in html
        assert f"{100 * row.power_bh:.1f} % ({row.family_size})" in html


@pytest.mark.django_db
def test_the_launch_preview_states_it_too(researcher_client):
    from audits.tests.engine_factories import make_questions, simulation_endpoint
    from audits.tests.test_launch_preview import form_data

    make_questions(200, "mathematics")
    endpoints = {role: simulation_endpoint(f"mp-{role}") for role in ("tutor", "student", "judge")}
    response = researcher_client.post(reverse("audits:audit-new-preview"), form_data(endpoints))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="preview-power-method"' in html
    for row in response.context["preview"].power:
        assert f"{100 * row.power_bh:.1f} % ({row.family_size})" in html
