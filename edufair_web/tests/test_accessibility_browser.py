"""Browser (Chromium): axe-core (vendored, `static/vendor/axe-core/`) finds no serious or critical violation on the
ten main pages (and the live stage dashboard), each opened by the role that works there; each page loads htmx once
opens with the link that skips to the content,
and names each data table (a caption) and the cells its headers head (`scope`, or `headers` on the cell).

One test seeds once and visits all ten: the demo audit (finished, analysed) and an annotation stage with one
disagreement for the adjudicator.
"""

import io

import pytest

from annotation.services.labelling import label_next, main_label_submit
from annotation.tests.main_setup import answers, build_main_stage, pass_gate
from audits.demo import DEMO_AUDIT_NAME, demo_audit_seed
from audits.models import Audit
from audits.tests.engine_factories import make_questions
from conftest import browser_login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("analysis_inline")]

AXE_URL = "/static/vendor/axe-core/axe.min.js"
BLOCKING = ("serious", "critical")
# Tables without a caption, and header cells that neither have a scope nor are named by a cell's `headers`.
UNNAMED_TABLES = """() => {
  const named = new Set([...document.querySelectorAll("td[headers]")].flatMap(td => td.headers.split(" ")));
  return [...document.querySelectorAll("table:not(:has(> caption))")].map(t => t.outerHTML.slice(0, 80)).concat(
    [...document.querySelectorAll("th:not([scope])")].filter(th => !named.has(th.id)).map(th => th.outerHTML));
}"""


def axe_violations(page) -> list[dict]:
    """Every violation axe-core reports on the page as it stands (its rules at their defaults). The file is added
    from the static URL the server already serves: the pages' Content-Security-Policy refuses inline scripts."""
    page.add_script_tag(url=AXE_URL)
    return page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']})).violations")


def blocking(violations: list[dict]) -> list[str]:
    return [
        f"{v['id']} ({v['impact']}): {node['target']}"
        for v in violations
        if v["impact"] in BLOCKING
        for node in v["nodes"]
    ]


def test_the_ten_main_pages_have_no_serious_or_critical_violation(page, make_user):
    make_questions(6)
    demo_audit_seed(io.StringIO())
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    s = build_main_stage(items=2, overlap=2, policy="majority_reviewer")
    annotators = [make_user("annotator") for _ in range(2)]
    for user in annotators:
        pass_gate(s.stage, user)
    for user, value in zip(annotators, ("yes", "no"), strict=True):  # the first item: a disagreement
        item = label_next(annotator=user, stage=s.stage).item
        main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value), seconds=12)
    pages = {
        "researcher": [
            "/",
            "/audits/runs/",
            "/audits/runs/new/",
            f"/audits/runs/{audit.pk}/",
            f"/audits/results/{audit.pk}/",
            "/audits/questionbank/",
            f"/annotation/projects/{s.project.pk}/",
            f"/annotation/stages/{s.stage.pk}/",
            f"/annotation/dashboard/{s.stage.pk}/",
        ],
        annotators[0].username: [f"/annotation/label/{s.stage.pk}/"],
        "adjudicator": [f"/annotation/adjudicate/{s.stage.pk}/{s.items[0].pk}/"],
    }
    found, unnamed_tables = {}, {}
    for who, urls in pages.items():
        username = who if who not in ("researcher", "adjudicator") else make_user(who).username
        browser_login(page, username)
        for url in urls:
            response = page.goto(url)
            assert response.status == 200, url
            page.wait_for_load_state("networkidle")
            assert page.locator('script[src$="htmx.min.js"]').count() == 1, url
            skip = page.evaluate("(({href, textContent}) => [href, textContent])(document.body.firstElementChild)")
            assert skip == [f"{page.url.split('#')[0]}#main", "Skip to the content"], url
            found[url] = axe_violations(page)
            unnamed_tables[url] = page.evaluate(UNNAMED_TABLES)
        page.context.clear_cookies()

    assert {url: blocking(violations) for url, violations in found.items() if blocking(violations)} == {}
    # Every data table is named by a caption, and every header cell says what it heads.
    assert {url: n for url, n in unnamed_tables.items() if n} == {}
