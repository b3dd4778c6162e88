"""The HTML report served as a page (the download's template, what the audit found first), under 1 MB for the demo.

The demo audit as `make demo` seeds it (the sample questions, two simulated tutors, the control and every explicit
level): its report, as a page and as the download, stays under 1 MB, with its tables scrolling inside their box.
"""

import io

import pytest
from django.test import Client
from django.urls import reverse

from audits.demo import DEMO_AUDIT_NAME, demo_audit_seed, sample_imports_seed
from audits.models import Audit

# transaction=True: the demo's audit writes its tallies thousands of times; inside one rolled-back transaction each
# update walks the row's versions (16 s committed against 21 s rolled back, measured on PostgreSQL).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("analysis_inline"), pytest.mark.slow]

REPORT_LIMIT = 1_000_000  # bytes


def test_the_demo_report_is_a_page_under_a_megabyte_with_its_findings_first(researcher_client, make_user):
    sample_imports_seed()
    demo_audit_seed(io.StringIO())
    audit = Audit.objects.get(name=DEMO_AUDIT_NAME)
    assert audit.questions.values("domain").distinct().count() >= 3  # the demo's size: every sample domain

    url = reverse("audits:results-report", args=[audit.pk])
    annotator = Client()
    annotator.force_login(make_user("annotator", "report-reader"))
    assert annotator.get(url).status_code == 403
    response = researcher_client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    assert "Content-Disposition" not in response
    page = response.content
    download = researcher_client.get(reverse("audits:results-export", args=[audit.pk]) + "?format=html").content
    for body in (page, download):
        assert len(body) < REPORT_LIMIT, f"{len(body):,} bytes"
    html = page.decode()
    assert html.index('id="findings"') < html.index('id="methods-heading"') < html.index("Violations")
    assert html.count('class="finding-tutor') == 2
    # every contrast table scrolls inside its own box, so none widens the page
    assert html.count("<table") == html.count('<div class="table-scroll"><table')
