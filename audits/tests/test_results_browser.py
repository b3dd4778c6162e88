"""Browser (Chromium): a researcher logs in, opens the demo audit's results from the dashboard, sees the
planted cell flagged, clicks it and reads the paired transcripts side by side.

The demo audit is the one `manage.py seed_demo` makes (`audits.demo.demo_audit_seed`: a fair and a
planted-bias simulated tutor, control + the nine explicit levels), here over 18 questions of one domain so
that it runs in seconds.
"""

import io

import pytest

from audits.demo import DEMO_AUDIT_NAME, demo_audit_seed
from audits.models import Audit
from audits.tests.engine_factories import make_questions
from conftest import browser_login

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("analysis_inline")]


def test_researcher_finds_the_planted_cell_and_reads_the_pairs(page, make_user):
    make_questions(18)
    demo_audit_seed(io.StringIO())
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    biased = audit.tutors.get(name__contains="planted bias")
    fair = audit.tutors.get(name__contains="fair")
    user = make_user("researcher")

    browser_login(page, user.username)
    page.goto("/audits/")
    page.get_by_role("link", name="Results").first.click()
    page.wait_for_url(f"**/audits/results/{audit.pk}/**")
    assert page.locator(".simulation-banner").is_visible()
    assert page.get_by_text("not validated").first.is_visible()

    def planted(tutor_id: int):
        return page.locator(
            f'a.cell[data-tutor="{tutor_id}"][data-dimension="first_language"][data-level-a="english_l1"]'
            f'[data-level-b="non_english_l1"][data-metric="corrective_tone"]'
        )

    # What this audit found comes first: the planted cell in words for the biased tutor, nothing for the fair one.
    findings = page.locator("#findings")
    assert findings.is_visible() and not page.locator(".parameters-form").first.is_visible()  # folded below
    planted_finding = findings.locator(
        f'[data-tutor="{biased.pk}"] li[data-dimension="first_language"][data-level-a="english_l1"]'
        '[data-metric="corrective_tone"]'
    )
    assert "get less encouraging corrections than" in planted_finding.inner_text()
    assert "No contrast cell of this tutor is flagged" in findings.locator(f'[data-tutor="{fair.pk}"]').inner_text()

    # The findings' counts are the violations table's.
    for tutor in (biased, fair):
        flagged = findings.locator(f'[data-tutor="{tutor.pk}"]').get_attribute("data-flagged")
        table_rows = page.locator(f'#violations + .table-scroll tr.violation:has(td[data-tutor="{tutor.pk}"])')
        assert table_rows.count() == int(flagged)
    assert int(findings.locator(f'[data-tutor="{biased.pk}"]').get_attribute("data-flagged")) > 0

    cell = planted(biased.pk)
    assert "violation" in cell.get_attribute("class")
    assert "violation" not in planted(fair.pk).get_attribute("class")
    hover = cell.locator("title").text_content()
    assert "r = -" in hover and "95% CI" in hover and "VIOLATION" in hover

    cell.click()
    page.wait_for_url("**/results/*/pairs/**")
    assert page.get_by_text("violation", exact=True).first.is_visible()
    side_a, side_b = page.locator(".side-a"), page.locator(".side-b")
    assert "English is my first language" in side_a.inner_text()
    assert "English is not my first language" in side_b.inner_text()
    assert side_a.locator(".score.chosen").count() > 0 and side_b.locator(".score.chosen").count() > 0

    # Another question of the pairs table, read side by side.
    page.locator("table.pairs tbody tr").nth(3).get_by_role("link").click()
    page.wait_for_url("**question=*")
    assert page.locator("table.pairs tr.selected").count() == 1
    assert page.locator(".side-b .turn-tutor").count() > 0

    # Compare (fair → biased): the planted cell is flagged on the right only, with both sides' flags.
    page.goto(f"/audits/results/compare/?left={audit.pk}:{fair.pk}&right={audit.pk}:{biased.pk}")
    compared = page.locator(
        '#flag-changes tr[data-dimension="first_language"][data-level-a="english_l1"][data-level-b="non_english_l1"]'
        '[data-metric="corrective_tone"]'
    )
    assert compared.count() == 1 and compared.get_attribute("data-flagged-on") == "right"
    assert compared.locator('[data-side="left"]').inner_text() == "—"

    # The HTML report as a page, readable at 1,280 px: its findings first, no table widening the page.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"/audits/results/{audit.pk}/report/")
    assert page.locator("#findings").is_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
