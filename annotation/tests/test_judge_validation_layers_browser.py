"""In Chromium: the researcher opens the judge-validation report and sees the verdict's named rule, the three
validity layers of each metric (human ceiling, judge against humans with the alt-test, the judge's direction), the
validation planner, and changes ε (the alt-test's margin) from the page."""

import pytest

from annotation.judge_validation.services import validation_project_create
from annotation.selectors.judge_validation import validation_stage
from audits.judge import METRICS
from conftest import browser_login

from .judge_validation_setup import passed_annotators, run_simulation_audit
from .test_judge_validation_rubric_versions import label_like_the_judge

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_report_shows_the_rule_the_three_layers_and_the_planner(page, live_server, make_user, researcher):
    audit = run_simulation_audit("layers browser audit", questions=2)
    project = validation_project_create(audit=audit, size=6, seed=0, training_pool=2)
    stage = validation_stage(project)
    label_like_the_judge(stage, passed_annotators(stage, make_user), audit, METRICS)

    browser_login(page, researcher.username)
    page.goto(f"/annotation/judge-validation/{project.pk}/")
    assert page.locator("[data-rule-name]").inner_text() == "interval"
    assert page.locator("[data-verdict][data-rule='interval']").count() == len(METRICS)
    assert page.locator("[data-layers]").count() == len(METRICS)
    first = page.locator("[data-layers]").first
    assert "Humans' α" in first.locator("[data-layer-ceiling]").inner_text()
    assert "AC1" in first.locator("[data-layer-judge]").inner_text()
    alt = first.locator("[data-alt-test]").inner_text()
    assert "ε = 0.20 (expert annotators" in alt and "ω =" in alt and "at least 30" in alt
    assert "Mean judge − human" in first.locator("[data-layer-direction]").inner_text()
    assert page.locator("[data-validation-plan] tbody tr").count() == 3
    assert page.locator("[data-kappa-plan]").is_visible()

    page.fill("#epsilon", "0.1")
    with page.expect_navigation():
        page.locator("[data-epsilon-form] button").click()
    assert "ε = 0.10 (crowd workers)" in page.locator("[data-alt-test]").first.inner_text()

    page.select_option("#rule", "point")
    with page.expect_navigation():
        page.locator("[data-rule-form] button").click()
    assert page.locator("[data-rule-name]").inner_text() == "point"
    assert page.locator("[data-verdict][data-rule='point']").count() == len(METRICS)
    assert "ε = 0.10" in page.locator("[data-alt-test]").first.inner_text()  # the chosen ε is kept
