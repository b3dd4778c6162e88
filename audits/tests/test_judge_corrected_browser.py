"""Browser (Chromium): a researcher opens the results of the cue-sensitive judge demo audit, follows the link to the
judge-corrected view and finds the judge's tone flag that the humans' corrected interval does not support, with
its reason.

The audit and its judge-validation project are the ones `manage.py seed_demo` makes
(`audits.demo.cue_demo_audit_seed`, `annotation.judge_validation.demo.cue_validation_demo_seed`: a fair simulated
tutor, a judge one point harsher on the tone of turns to non-English-L1 students, scripted annotators who rate by
the unbiased rules), here over 18 questions of one domain so that it runs in seconds.
"""

import io

import pytest

from annotation.judge_validation.demo import cue_validation_demo_seed
from audits.demo import cue_demo_audit_seed
from audits.tests.engine_factories import make_questions
from conftest import browser_login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("analysis_inline")]


def test_researcher_finds_the_judge_flag_the_humans_do_not_support(page, make_user):
    make_questions(18)
    audit = cue_demo_audit_seed(io.StringIO())
    cue_validation_demo_seed(io.StringIO())
    user = make_user("researcher")

    browser_login(page, user.username)
    page.goto("/audits/")
    page.get_by_role("link", name="Results").first.click()
    page.wait_for_url(f"**/audits/results/{audit.pk}/**")
    assert page.locator(".simulation-banner").is_visible()
    note = page.locator("#judge-corrected-note + p")
    assert "disagreeing" in note.inner_text()

    note.get_by_role("link", name="Judge-corrected results").click()
    page.wait_for_url(f"**/audits/results/{audit.pk}/judge-corrected/**")
    assert page.locator(".simulation-banner").is_visible()
    assert "corrective_tone" in page.locator("#cue-sensitive-metrics").inner_text()

    cell = (
        '#judge-corrected-table tr[data-disagreement="unsupported"][data-metric="corrective_tone"]'
        '[data-level-b="non_english_l1"]'
    )
    assert page.locator(cell).count() >= 1
    row = page.locator(cell).first
    assert row.is_visible()
    assert row.locator(".badge").inner_text().strip().lower() == "flag not supported by humans"
    assert row.get_by_text("violation", exact=True).is_visible()  # the judge-only flag
    reason = page.locator(f"{cell} + tr .reason").first.inner_text().lower()  # the row under the cell's
    assert "the judge-only analysis flags this cell" in reason
    assert "covers 0" in reason or "lies on the other side of 0" in reason
    assert "judge cue-sensitive" in row.inner_text()
    # Disagreeing cells come first: the table opens with one.
    first_row = page.locator("#judge-corrected-table tbody tr").first
    assert first_row.get_attribute("data-disagreement") in ("unsupported", "hidden")
