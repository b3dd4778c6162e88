"""Acceptance 5, in Chromium: an annotator rates a tutor turn on all five rubric metrics with the keyboard
only (number keys for 0–2, n for "not applicable", Enter submits); then the researcher opens the
validation report and sees the judge's agreement with the humans."""

import pytest

from annotation.judge_validation.services import validation_project_create
from annotation.models import Assignment, Label
from annotation.selectors.judge_validation import validation_stage
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer
from audits.judge import METRICS
from conftest import browser_login

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# What the annotator types for the five metrics, in the form's order, and the values that must be stored:
# the digit typed is the value (annotation.workflow.choice_keys).
KEYS = ["2", "0", "n", "1", "2"]
STORED = {
    "mistake_recognize": "2",
    "answer_leakage": "0",
    "step_scaffolded": "n/a",
    "actionability": "1",
    "corrective_tone": "2",
}


def test_annotator_labels_a_turn_with_the_keyboard_and_the_researcher_reads_the_report(
    page, chromium_browser, live_server, make_user, researcher
):
    audit = run_simulation_audit("browser audit", questions=2)
    project = validation_project_create(audit=audit, size=4, seed=0, training_pool=2)
    stage = validation_stage(project)
    keyboard_user, *others = passed_annotators(stage, make_user)
    for user in others:  # two colleagues have labelled every turn already
        while (assignment := label_next(annotator=user, stage=stage)) is not None:
            main_label_submit(
                annotator=user, stage=stage, item=assignment.item, answers={m: Answer(value="1") for m in METRICS}
            )

    browser_login(page, keyboard_user.username)
    page.goto(f"/annotation/label/{stage.pk}/")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    assert page.locator(".label-question").count() == 5
    assert page.locator("li.turn.highlight").count() == 1  # the judged tutor turn is highlighted
    item_id = int(page.locator("[data-item]").first.get_attribute("data-item"))
    for key in KEYS:
        page.keyboard.press(key)
    with page.expect_navigation():
        page.keyboard.press("Enter")

    assignment = Assignment.objects.get(stage=stage, item_id=item_id, annotator=keyboard_user)
    assert assignment.submitted_at is not None
    stored = dict(Label.objects.filter(assignment=assignment).values_list("question__key", "value"))
    assert stored == STORED

    context = chromium_browser.new_context(base_url=live_server.url)
    researcher_page = context.new_page()
    try:
        browser_login(researcher_page, researcher.username)
        researcher_page.goto(f"/annotation/judge-validation/{project.pk}/")
        table = researcher_page.locator("[data-report]")
        assert table.is_visible()
        assert audit.judge_endpoint.name in table.inner_text()
        assert researcher_page.locator("[data-report] tbody tr").count() == 5
        # The turn now has three labels; where all three agree (actionability) it has a consensus already.
        assert "1 / 4" in researcher_page.locator("[data-report] tbody").inner_text()
    finally:
        context.close()
