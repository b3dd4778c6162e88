"""The researchers' dashboard at /audits/: audits with status and progress, the latest results from the
cache (never computed by the dashboard itself), the launch links, and the navigation entry."""

import pytest
from django.test import Client
from django.urls import reverse

from audits.models import AnalysisResult, Audit
from audits.services.analysis import audit_analysis
from audits.tests.test_results_pages import results_audit

pytestmark = pytest.mark.django_db


def test_dashboard_lists_audits_progress_and_latest_results(researcher_client):
    audit = results_audit("dashboard audit")
    draft = Audit.objects.create(
        name="a draft audit",
        student_endpoint=audit.student_endpoint,
        judge_endpoint=audit.judge_endpoint,
        tutor_template=audit.tutor_template,
        student_template=audit.student_template,
        judge_template=audit.judge_template,
        check_template=audit.check_template,
    )
    url = reverse("audits:dashboard")
    assert url == "/audits/"
    page = researcher_client.get(url).content.decode()
    assert "dashboard audit" in page and "a draft audit" in page and "Finished" in page and "Draft" in page
    assert f"{audit.dialogues.count()} / {audit.dialogues.count()}" in page and "0 / 0" in page
    assert reverse("audits:audit-new") in page and reverse("audits:design-preview") in page
    assert reverse("audits:results", args=[audit.pk]) in page
    assert reverse("audits:results", args=[draft.pk]) not in page  # nothing to analyse yet
    # The dashboard never starts an analysis: it points to the results page instead.
    assert "Not analysed yet" in page and not AnalysisResult.objects.exists()

    audit_analysis(audit=audit)
    page = researcher_client.get(url).content.decode()
    # the flagged cells counted under the rule, never a mean |r|: the fair tutor reads as fair
    assert "exceeds |r| ≥ 0.10 in 1 of 1 domain × dimension cells" in page and "no flagged cell" in page
    assert "cells over threshold" not in page
    assert "first_language: english_l1 → non_english_l1 · corrective_tone" in page  # the planted violation


def test_dashboard_is_for_researchers_and_linked_from_the_navigation(researcher_client, make_user):
    annotator = Client()
    annotator.force_login(make_user("annotator"))
    assert annotator.get(reverse("audits:dashboard")).status_code == 403
    home = researcher_client.get("/").content.decode()
    assert 'href="/audits/">Dashboard</a>' in home
