"""Acceptance 4, in Chromium: two annotators label the same items with the keyboard only (number keys,
Enter; the justification box takes the focus where "no" needs one) and disagree on one item; the
adjudicator resolves it from the queue with the keyboard; the researcher's report shows the Fleiss' κ and
the adjudication rate that this test computes independently (statsmodels; the paper's rate form)."""

import numpy as np
import pytest
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from annotation.models import Adjudication, Label
from conftest import browser_login

from .main_setup import build_main_stage, pass_gate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEYS = {"yes": "1", "no": "2"}
FIRST = ["yes", "yes", "no", "yes"]
SECOND = ["yes", "no", "no", "yes"]  # disagrees on item 1


def label_all_with_keyboard(page, stage_pk, values, items):
    page.goto(f"/annotation/label/{stage_pk}/")
    for value, item in zip(values, items, strict=True):
        page.wait_for_selector("[data-label-form][data-keyboard-ready]")
        assert int(page.locator("[data-item]").first.get_attribute("data-item")) == item.pk
        page.keyboard.press(KEYS[value])
        if value == "no":
            page.keyboard.type("The premise of the question is wrong.")
        with page.expect_navigation():
            page.keyboard.press("Enter")
    assert page.locator("[data-done]").is_visible()


def test_two_annotators_disagree_the_adjudicator_resolves_the_report_agrees(page, make_user):
    s = build_main_stage(items=4, overlap=2, policy="majority_reviewer")
    annotators = [make_user("annotator") for _ in range(2)]
    for user in annotators:
        pass_gate(s.stage, user)
    adjudicator = make_user("adjudicator")
    researcher = make_user("researcher")

    for user, values in zip(annotators, (FIRST, SECOND), strict=True):
        browser_login(page, user.username)
        label_all_with_keyboard(page, s.stage.pk, values, s.items)
        page.context.clear_cookies()
    assert Label.objects.filter(phase="main").count() == 8
    assert Label.objects.filter(value="no", justification="").count() == 0
    assert Label.objects.filter(seconds__gt=0).count() == 8  # active time was measured and sent

    browser_login(page, adjudicator.username)
    page.goto("/annotation/adjudicate/")
    page.click("[data-queue] a")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    assert "The premise of the question is wrong." in page.locator("[data-side-by-side]").inner_text()
    page.keyboard.press("2")  # "no"; the focus moves to the note
    page.keyboard.type("The second annotator is right: the premise is wrong.")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    decided = Adjudication.objects.get(item=s.items[1])
    assert (decided.method, decided.final_value, decided.decided_by) == ("senior", "no", adjudicator)
    page.context.clear_cookies()

    codes = {"yes": 0, "no": 1}
    table, _ = aggregate_raters(np.array([[codes[a], codes[b]] for a, b in zip(FIRST, SECOND, strict=True)]))
    expected_kappa = f"{sm_fleiss_kappa(table, method='fleiss'):.3f}"
    no_majority = sum(a != b for a, b in zip(FIRST, SECOND, strict=True))
    expected_rate = f"{no_majority}/{len(FIRST)} = {100 * no_majority / len(FIRST):.1f}% no majority"

    browser_login(page, researcher.username)
    page.goto(f"/annotation/projects/{s.project.pk}/report/")
    first_kappa = page.locator("[data-agreement] [data-kappa-pre]").first.inner_text()
    assert first_kappa.startswith(expected_kappa)
    assert page.locator("[data-adjudication-stage='1'] [data-rate]").inner_text() == expected_rate
