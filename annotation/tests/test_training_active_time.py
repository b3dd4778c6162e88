"""The label form records active time per item: the clock stops while the tab is hidden. Playwright's
fake clock drives the time, so the test is exact and waits for nothing."""

from datetime import UTC, datetime, timedelta

import pytest

from annotation.models import Label
from conftest import browser_login

from .training_setup import build_stage, enrol, through_examples

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SET_VISIBILITY = """state => {
  Object.defineProperty(document, "visibilityState", {configurable: true, get: () => state});
  document.dispatchEvent(new Event("visibilitychange"));
}"""


def test_hidden_tab_time_is_not_counted(page, make_user):
    s = build_stage(pilot=2)
    user = make_user("annotator")
    through_examples(s, enrol(s, user))
    browser_login(page, user.username)
    # Installed, the fake clock still flows with real time; paused, only run_for moves it, so a slow machine
    # (the page loading, the submit) adds nothing to what the page measures. The pause lies a minute after the
    # install: pausing at the install's own instant fails once any real time has passed ("cannot fast-forward
    # to the past").
    page.clock.install(time=START - timedelta(minutes=1))
    page.clock.pause_at(START)
    page.goto(f"/annotation/training/{s.stage.pk}/pilot/")
    page.wait_for_selector("[data-label-form][data-keyboard-ready]")

    page.clock.run_for(5_000)  # 5 s reading the item
    page.evaluate(SET_VISIBILITY, "hidden")
    page.clock.run_for(600_000)  # 10 min in another tab: not counted
    page.evaluate(SET_VISIBILITY, "visible")
    page.clock.run_for(2_000)  # 2 s more, then the answer
    item_id = int(page.get_attribute("[data-item]", "data-item"))
    page.keyboard.press("1" if s.gold[item_id] == "yes" else "2")
    if s.gold[item_id] == "no":
        page.keyboard.type("reason")
    with page.expect_navigation():
        page.keyboard.press("Enter")

    label = Label.objects.get(assignment__annotator=user, assignment__item_id=item_id)
    assert label.seconds == pytest.approx(7.0, abs=0.05)
