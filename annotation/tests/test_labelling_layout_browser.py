"""In Chromium at 1280 × 800, on a five-question rubric with a long dialogue: the turn being rated and the
submit button stay in view while the annotator answers every question with the keyboard."""

import pytest

from annotation.models import Item, Label
from annotation.services.projects import project_create, question_create, stage_create
from annotation.services.training import guideline_publish
from conftest import browser_login

from .main_setup import pass_gate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

METRICS = ("mistake_recognize", "answer_leakage", "step_scaffolded", "actionability", "corrective_tone")


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).first.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800


def test_rated_turn_and_submit_stay_in_view_across_five_questions(page, make_user):
    page.set_viewport_size({"width": 1280, "height": 800})
    project = project_create(name="Five questions", subjects=["maths"])
    questions = [
        question_create(
            project=project,
            key=metric,
            prompt=f"How would you rate {metric.replace('_', ' ')} in the highlighted tutor turn? "
            "Read the whole dialogue before answering.",
            help_text="0 = not at all, 1 = partly, 2 = fully. Explain a 0 in the justification.",
            level="ordinal",
            choices=[{"value": v, "label": v} for v in ("0", "1", "2")],
        )
        for metric in METRICS
    ]
    stage = stage_create(project=project, name="Rate turns", questions=questions, overlap=1)
    guideline_publish(stage=stage, text="# Guideline")
    turns = [
        {"role": "student" if n % 2 == 0 else "tutor", "text": f"Turn {n}: " + "words about the problem " * 12}
        for n in range(16)
    ]
    item = Item.objects.create(
        project=project, external_id="long", payload={"turns": turns, "highlight": 11}, subject="maths"
    )
    annotator = make_user("annotator")
    pass_gate(stage, annotator)

    browser_login(page, annotator.username)
    page.goto(f"/annotation/label/{stage.pk}/")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    assert in_view(page, ".turn.highlight") and in_view(page, "[data-submit]")
    for metric in METRICS:
        page.keyboard.press("2")
        assert page.locator(f"[data-question={metric}] input[value='2']").is_checked()
        assert in_view(page, ".turn.highlight"), f"the rated turn left the view at {metric}"
        assert in_view(page, "[data-submit]"), f"the submit button left the view at {metric}"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    stored = Label.objects.filter(assignment__item=item, assignment__annotator=annotator)
    assert dict(stored.values_list("question__key", "value")) == dict.fromkeys(METRICS, "2")
