"""In the browser: a researcher carries a design from the preview page into the launch form, is told what the
preview waits for, fills it, watches its preview follow the form (the judge leaves the tutor list; ticking a
dimension changes the counts; too few questions ask for "launch anyway"), launches, lands on the run page, watches
it follow the run to finished without a reload, and follows its Results link."""

import threading

import pytest
from playwright.sync_api import expect

from audits.models import Audit
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import make_questions, simulation_endpoint
from conftest import browser_login


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("analysis_inline")
def test_launch_from_the_form_with_the_preview_visible(page, make_user, monkeypatch):
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    make_user("researcher", username="ada")
    make_questions(15)
    for name in ("b-tutor", "b-student", "b-judge"):
        simulation_endpoint(name)
    browser_login(page, "ada")
    # A control-only design on the preview page, carried into the launch form.
    page.goto(
        "/audits/design/preview/?domains=mathematics&mode=count&count=15&seed=0&tutors=1&subsampled_tutors=0"
        "&control=on&t_max=10&judge_attempts=3"
    )
    expect(page.locator("#preview-dialogues")).to_have_text("15")
    page.click("#launch-this-design")
    page.wait_for_url("**/audits/runs/new/?*")
    expect(page.locator("#id_count")).to_have_value("15")
    expect(page.get_by_label("mathematics", exact=True)).to_be_checked()
    # Until the student and the judge are chosen, the preview says so (htmx asks even while the form is incomplete).
    missing = page.locator("#launch-preview-missing")
    expect(missing).to_have_text("Choose a student model and a judge to see the preview.")
    page.select_option("#id_student_endpoint", label="b-student (simulation)")
    expect(missing).to_have_text("Choose a judge to see the preview.")
    page.select_option("#id_judge_endpoint", label="b-judge (simulation)")
    expect(missing).to_have_count(0)
    page.fill("#id_name", "launched from the browser")
    # The endpoints chosen as student and judge leave the tutor list.
    tutor_list = page.locator("#tutor-choices")
    expect(tutor_list).not_to_contain_text("b-judge")
    expect(tutor_list).not_to_contain_text("b-student")
    expect(tutor_list).to_contain_text("b-tutor")
    tutor_list.get_by_label("b-tutor (simulation)").check()
    # Control only: 15 dialogues, and nothing to compare.
    dialogues = page.locator("#preview-dialogues")
    expect(dialogues).to_have_text("15")
    assert "nothing to compare" in page.inner_text("#launch-check")
    page.locator("#id_explicit_dimensions").get_by_label("Gender").check()
    # Control + three gender levels on 15 questions; 15 pairs per contrast is enough: no warning.
    expect(dialogues).to_have_text("60")
    expect(page.locator("#preview-calls")).to_have_text(f"{60 * 10 * (2 + 3 + 1):,}")
    # Said in short in the form's status region; the panel itself is no live region.
    expect(page.locator("#launch-preview-announcer")).to_have_text(
        f"Preview: 60 dialogues, {60 * 10 * (2 + 3 + 1):,} model calls at most."
    )
    assert page.locator("[aria-live]").count() == 0
    expect(page.locator("#launch-check")).to_have_text("")
    assert "yes" in page.inner_text("#preview-power") and not page.locator("#id_confirm").count()
    # Five questions: five pairs per contrast, so the form asks for "launch anyway".
    page.fill("#id_count", "5")
    page.locator("#id_count").dispatch_event("change")
    expect(dialogues).to_have_text("20")
    expect(page.locator("#launch-check")).to_contain_text("every contrast has fewer than 15 pairs")
    page.get_by_label("Launch anyway").check()
    page.click("#audit-create")
    page.wait_for_url("**/audits/runs/*/")
    audit = Audit.objects.get(name="launched from the browser")
    assert page.url.endswith(f"/audits/runs/{audit.pk}/")
    assert audit.status == Audit.Status.RUNNING and audit.dialogues.count() == 20

    # The run page follows the run by itself (a worker runs it while the page is open) and links its results.
    expect(page.locator("#audit-status")).to_have_text("running")
    worker = threading.Thread(target=audit_run_inline, kwargs={"audit": audit})
    worker.start()
    expect(page.locator("#audit-status")).to_have_text("finished", timeout=60000)
    worker.join(60)
    expect(page.locator("#dialogues-done")).to_have_text("20")
    page.locator("#results-link").click()
    page.wait_for_url(f"**/audits/results/{audit.pk}/")
    expect(page.locator("h1")).to_contain_text("launched from the browser")
    expect(page.locator("#dimensions")).to_be_visible()
