"""Browser (Chromium): the run page follows an audit to its end without a reload and offers its results;
the results filtered to violations only; the compare page's plot; an audit against a dead endpoint ends
`failed`, in red, with its errors grouped by cause and host."""

import threading

import pytest
from playwright.sync_api import expect

from audits.models import Audit
from audits.services.audit_lifecycle import audit_create, audit_launch
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import (
    PLANTED_BIAS,
    explicit_conditions,
    make_questions,
    openai_endpoint,
    simulation_endpoint,
)
from conftest import browser_login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("analysis_inline")]


def test_the_run_page_follows_the_audit_to_its_results_and_a_dead_endpoint_reads_failed(
    page, make_user, monkeypatch, settings
):
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    user = make_user("researcher")
    sim = simulation_endpoint("student and judge")
    audit = audit_create(
        name="watched audit",
        tutors=[simulation_endpoint("fair tutor"), simulation_endpoint("biased tutor", bias=PLANTED_BIAS)],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(16, prefix="watched"),
        conditions=explicit_conditions(("first_language",)),
    )
    audit_launch(audit=audit)  # running, every dialogue pending: nothing has run yet

    browser_login(page, user.username)
    page.goto(f"/audits/runs/{audit.pk}/")
    expect(page.locator("#audit-status")).to_have_text("running")
    expect(page.get_by_role("button", name="Pause")).to_be_visible()
    # A worker runs the dialogues while the page is open; the page follows by itself.
    worker = threading.Thread(target=audit_run_inline, kwargs={"audit": audit})
    worker.start()
    expect(page.locator("#audit-status")).to_have_text("finished", timeout=60000)
    worker.join(60)
    expect(page.get_by_role("button", name="Pause")).to_have_count(0)
    expect(page.locator("#dialogues-done")).to_have_text(str(audit.dialogues.count()))
    # Announced once, in the page's status region; the panel swapped in on every poll is no live region.
    announced = page.locator("#audit-status-announcer")
    expect(announced).to_have_text(f"Audit finished, {audit.dialogues.count()} dialogues done.")
    assert announced.get_attribute("role") == "status" and page.locator("[aria-live]").count() == 0
    page.locator("#results-link").click()
    page.wait_for_url(f"**/audits/results/{audit.pk}/**")

    # Violations only: the collapsed tables open, holding violation rows alone.
    page.get_by_label("Violations only").check()
    page.get_by_role("button", name="Filter the tables").click()
    page.wait_for_url("**violations=on**")
    conversation = page.locator("#conversation-rows")
    expect(conversation).to_have_attribute("open", "")
    rows = conversation.locator("tbody tr[class]")
    for index in range(rows.count()):
        assert "violation" in (rows.nth(index).get_attribute("class") or "")

    # The compare page: the two tutors' changes with their CIs, as a dot-and-whisker plot.
    fair, biased = sorted(audit.tutors.values_list("pk", flat=True))
    page.goto(f"/audits/results/compare/?left={audit.pk}:{fair}&right={audit.pk}:{biased}")
    plot = page.locator("#change-plot svg")
    expect(plot).to_be_visible()
    assert plot.locator("circle.dot").count() > 0 and plot.locator("line.whisker").count() > 0

    # An audit whose tutor endpoint is down: failed, in red, the error grouped with its host.
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 1, "backoff_base": 0.0, "backoff_cap": 0.0, "max_retry_after": 1}
    dead = audit_create(
        name="dead audit",
        tutors=[openai_endpoint("dead tutor", "http://127.0.0.1:9/v1", timeout=1.0)],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(1, prefix="dead"),
        conditions=explicit_conditions(),
    )
    assert audit_run_inline(audit=dead) == Audit.Status.FINISHED
    page.goto(f"/audits/runs/{dead.pk}/")
    status = page.locator("#audit-status")
    expect(status).to_have_text("failed")
    assert status.evaluate("e => getComputedStyle(e).color") == "rgb(180, 35, 24)"  # --bad, the app's red
    expect(page.locator("#call-failure-groups")).to_contain_text("127.0.0.1:9")
