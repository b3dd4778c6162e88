"""The results page's filter (tutor, domain, dimension, metric, violations only) narrows the listed rows; the
big tables are collapsed until asked for; an invalid filter value lists everything instead of failing."""

import re

import pytest
from django.urls import reverse

from audits.tests.test_results_pages import results_audit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("analysis_inline")]


def rows_in(page: str, table_id: str) -> int:
    block = page.split(f'id="{table_id}"', 1)[1].split("</details>", 1)[0]
    return len(re.findall(r"<tr class=", block))


def test_filter_narrows_the_tables_and_opens_them(researcher_client):
    audit = results_audit("filter audit", questions=16)
    url = reverse("audits:results", args=[audit.pk])
    everything = researcher_client.get(url, {"n_boot": 200}).content.decode()
    assert '<details id="conversation-rows">' in everything  # collapsed by default
    total = rows_in(everything, "conversation-rows")
    assert total > 0

    tutor = audit.tutors.order_by("pk").first()
    one_tutor = researcher_client.get(url, {"n_boot": 200, "tutor": tutor.pk}).content.decode()
    assert '<details id="conversation-rows" open>' in one_tutor
    assert 0 < rows_in(one_tutor, "conversation-rows") < total
    assert "(filtered)" in one_tutor and "clear the filter" in one_tutor

    violations = researcher_client.get(url, {"n_boot": 200, "violations": "on"}).content.decode()
    block = violations.split('id="conversation-rows"', 1)[1].split("</details>", 1)[0]
    classes = re.findall(r'<tr class="([^"]*)"', block)
    assert all(c.startswith("violation") for c in classes) and len(classes) < total

    # The analysis parameters survive a filter (hidden fields), and a bad value filters nothing.
    assert 'name="n_boot" value="200"' in violations
    broken = researcher_client.get(url, {"n_boot": 200, "tutor": "nobody"})
    assert broken.status_code == 200 and rows_in(broken.content.decode(), "conversation-rows") == total
