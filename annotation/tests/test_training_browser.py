"""Acceptance 4, in Chromium: an annotator logs in, confirms the guideline, studies the worked examples,
labels the pilot with the keyboard only, sees the feedback with gold and rationales, finishes the norming
step and passes the qualification test — every label chosen with number keys and submitted with Enter."""

import re

import pytest

from annotation.models import Enrollment, Label
from conftest import browser_login

from .training_setup import build_stage, enrol

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEYS = {"yes": "1", "no": "2"}


def label_with_keyboard(page, gold: dict[int, str]) -> None:
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    item_id = int(page.locator("[data-item]").first.get_attribute("data-item"))
    value = gold[item_id]
    page.keyboard.press(KEYS[value])
    if value == "no":  # the justification box takes the focus when the value needs one
        page.keyboard.type("The question is not well-formed.")
    with page.expect_navigation():
        page.keyboard.press("Enter")


def test_annotator_passes_training_with_the_keyboard(page, make_user):
    s = build_stage(pilot=4, qualification=10, examples=2)
    user = make_user("annotator")
    enrol(s, user)
    browser_login(page, user.username)

    page.goto(f"/annotation/training/{s.stage.pk}/")
    page.click("[data-next-step]")
    page.wait_for_url("**/guideline/")
    assert "Judge whether the question is valid." in page.content()
    page.click("[data-confirm-guideline]")
    page.wait_for_url("**/examples/")

    for _ in s.example_items:
        assert page.locator("[data-example-label]").is_visible()
        with page.expect_navigation():
            page.click("[data-next-example]")

    assert re.search(r"/training/\d+/pilot/", page.url)
    for _ in s.pilot_items:
        assert "GOLD-RATIONALE" not in page.content()
        label_with_keyboard(page, s.gold)

    assert "/feedback/" in page.url
    assert "1" in page.locator("[data-pilot-score]").inner_text()
    assert "GOLD-RATIONALE-pilot0" in page.content()
    page.click("[data-continue]")
    page.wait_for_url("**/norming/")
    page.click("[data-norming-done]")
    page.wait_for_url("**/qualification/")
    for _ in s.qualification_items:
        label_with_keyboard(page, s.gold)

    assert "You passed the gate" in page.locator("[data-step]").inner_text()
    enrollment = Enrollment.objects.get(stage=s.stage, user=user)
    assert enrollment.gate_passed is True
    assert enrollment.qualification_correct == 10
    labels = Label.objects.filter(assignment__annotator=user)
    assert labels.count() == 14
    assert all(label.seconds > 0 for label in labels), "the page sends the active time on each item"
    assert labels.filter(value="no").exclude(justification="").count() == labels.filter(value="no").count()
