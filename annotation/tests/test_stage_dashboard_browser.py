"""Acceptance 4, in Chromium: the stage dashboard refreshes by itself while labels arrive — a researcher
keeps it open, labels are submitted meanwhile, and the page shows the new counts and the new running κ
(the value `annotation.agreement` gives on the same labels) without a reload; once every item is
complete it stops asking."""

import pytest

from annotation.agreement import fleiss_kappa
from annotation.services.labelling import label_next, main_label_submit
from conftest import browser_login

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _label(s, user, value):
    assignment = label_next(annotator=user, stage=s.stage)
    main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, value), seconds=12)


def test_the_dashboard_refreshes_while_labels_arrive(page, make_user, monkeypatch):
    from playwright.sync_api import expect  # with the `page` fixture, which skips when Playwright is absent

    monkeypatch.setattr("annotation.views.dashboard.POLL_SECONDS", 1)
    s = build_main_stage(items=2, overlap=2, policy="majority_reviewer")
    users = [make_user("annotator") for _ in range(2)]
    for user in users:
        pass_gate(s.stage, user)
    _label(s, users[0], "yes")
    _label(s, users[1], "yes")  # item 0: unanimous
    researcher = make_user("researcher")

    browser_login(page, researcher.username)
    page.goto(f"/annotation/dashboard/{s.stage.pk}/")
    assert page.locator("[data-labels]").inner_text() == "2"
    assert page.locator("[data-complete]").inner_text() == "1"
    assert page.locator("[data-kappa]").inner_text() == "undefined"  # one category so far
    reloads = []
    page.on("framenavigated", lambda frame: reloads.append(frame.url))

    _label(s, users[0], "yes")
    _label(s, users[1], "no")  # item 1: a disagreement
    kappa = fleiss_kappa([["yes", "yes"], ["yes", "no"]]).value
    expect(page.locator("[data-labels]")).to_have_text("4", timeout=10000)  # the poll brought it in
    assert page.locator("[data-complete]").inner_text() == "2"
    assert page.locator("[data-kappa]").inner_text() == f"{kappa:.3f}"
    assert reloads == []  # swapped in place by htmx, not a page load
    # Every item complete and nothing reserved: the swapped-in body no longer polls.
    assert page.locator("#stage-dashboard").get_attribute("hx-trigger") is None
