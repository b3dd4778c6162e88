"""Acceptance, in Chromium: a researcher creates and invites an annotator and enrols them by username; the
annotator follows the one-time link, sets a password, trains and labels; the researcher opens the stage's crowd
entry link; a participant arriving with a Prolific id becomes a new pseudonymous annotator, a second visit
resumes the same one, and finishing the quota shows the completion code and sends them to the platform."""

import re

import pytest

from annotation.models import CrowdRecruit, Enrollment, Label
from conftest import browser_login

from .test_training_browser import label_with_keyboard
from .training_setup import build_stage

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "a-long-passphrase-9421"
PLATFORM = "https://app.prolific.com/submissions/complete"


def test_invite_train_label_then_a_crowd_recruit_enters_resumes_and_finishes(page, make_user):
    s = build_stage(pilot=2, qualification=2, examples=1, main=3, min_correct=2)
    researcher = make_user("researcher")

    browser_login(page, researcher.username)
    page.goto("/annotation/people/")
    page.fill("#id_username", "invited-ann")
    page.select_option("#id_role", "annotator")
    page.click("[data-person-create] button[type=submit]")
    link = re.search(r"/annotation/people/welcome/\S+", page.locator("[data-invite-url] code").inner_text()).group(0)
    page.goto(f"/annotation/people/stages/{s.stage.pk}/")
    page.fill("#id_usernames", "invited-ann")
    page.fill("#id_subject", "maths")
    page.click("[data-bulk-enrol] button[type=submit]")
    page.wait_for_selector("[data-enrollment='invited-ann']")
    page.fill("#id_max_recruits", "5")
    page.fill("#id_items_per_recruit", "1")
    page.fill("#id_completion_url", PLATFORM)
    page.fill("#id_completion_code", "C0MPLETE")
    page.fill("#id_screened_out_code", "SCREENED")
    page.fill("#id_not_consented_code", "NOCONSENT")
    with page.expect_navigation():
        page.click("[data-crowd-form] button[type=submit]")
    entry = page.locator("[data-crowd-url]").inner_text().split("?")[0]
    page.context.clear_cookies()

    # The invitee: a password (the validators speak first), then the whole training, then a main item.
    page.goto(link)
    page.fill("#id_new_password1", "12345678")
    page.fill("#id_new_password2", "12345678")
    page.click("[data-set-password] button[type=submit]")
    assert "too common" in page.content()
    page.fill("#id_new_password1", PASSWORD)
    page.fill("#id_new_password2", PASSWORD)
    with page.expect_navigation():
        page.click("[data-set-password] button[type=submit]")
    page.goto(f"/annotation/training/{s.stage.pk}/")
    page.click("[data-next-step]")
    page.click("[data-confirm-guideline]")
    page.wait_for_url("**/examples/")
    with page.expect_navigation():
        page.click("[data-next-example]")
    for _ in s.pilot_items:
        label_with_keyboard(page, s.gold)
    page.click("[data-continue]")
    page.click("[data-norming-done]")
    page.wait_for_url("**/qualification/")
    for _ in s.qualification_items:
        label_with_keyboard(page, s.gold)
    assert "You passed the gate" in page.locator("[data-step]").inner_text()
    page.goto(f"/annotation/label/{s.stage.pk}/")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    page.keyboard.press("1")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert Label.objects.filter(assignment__annotator__username="invited-ann", phase="main").count() == 1
    page.context.clear_cookies()
    assert page.goto(link) and page.locator("[data-invalid-link]").is_visible()  # used once

    # A crowd participant: enters, comes back in a fresh session as the same pseudonym, finishes the quota.
    arrive = f"{entry}?PROLIFIC_PID=5f3c0a9b8d7e6f5a4b3c2d1e&STUDY_ID=st1&SESSION_ID="
    page.goto(arrive + "se1")
    page.click("[data-crowd-start-button]")  # the link's GET signs nobody in
    page.wait_for_url(f"**/annotation/training/{s.stage.pk}/")
    recruit = CrowdRecruit.objects.get()
    page.context.clear_cookies()
    page.goto(arrive + "se2")
    page.click("[data-crowd-start-button]")
    page.wait_for_url(f"**/annotation/training/{s.stage.pk}/")
    assert page.request.get("/api/me/?format=json").json()["username"] == recruit.user.username
    assert CrowdRecruit.objects.count() == 1
    # Their training is the flow above; here the gate is set directly to reach the quota quickly.
    Enrollment.objects.filter(user=recruit.user).update(gate_passed=True, status=Enrollment.Status.PASSED)
    page.goto(f"/annotation/training/{s.stage.pk}/guideline/")
    page.click("[data-confirm-guideline]")
    page.context.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="Prolific", content_type="text/html"),
    )
    page.goto(f"/annotation/label/{s.stage.pk}/")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")
    page.keyboard.press("1")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_selector("[data-crowd-done='completed']")
    assert page.locator("[data-completion-code]").inner_text() == "C0MPLETE"
    page.wait_for_url(f"{PLATFORM}?cc=C0MPLETE")
