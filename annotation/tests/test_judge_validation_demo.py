"""Acceptance 6: the demo seed builds a judge-validation project on the demo audit whose report is populated
(human α, judge agreement and verdicts per metric), records it so the audit shows its judge as validated,
leaves turns for the demo annotator, and seeding twice changes nothing."""

import io

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.demo import demo_seed
from annotation.judge_validation.demo import DEMO_VALIDATION_NAME, LEFT_FOR_THE_VISITOR
from annotation.models import AnnotationProject, Label
from annotation.selectors.judge_validation import validation_report
from annotation.services.labelling import label_next
from audits.demo import demo_audit_seed
from audits.models import Audit
from audits.selectors.results import judge_validation_status
from audits.tests.engine_factories import make_questions
from edufair_web.accounts.demo import demo_users_seed

pytestmark = pytest.mark.django_db


def test_demo_has_a_populated_judge_validation_report(client):
    demo_users_seed()
    make_questions(2)
    demo_audit_seed(io.StringIO())
    out = io.StringIO()
    demo_seed(out)
    project = AnnotationProject.objects.get(name=DEMO_VALIDATION_NAME)
    assert "verdicts recorded" in out.getvalue()

    report = validation_report(project)
    [judge] = report["judges"]
    assert judge["status"] == "recorded"
    defined_alpha = [row for row in report["metrics"] if row["human_alpha_pre"]["value"] is not None]
    assert len(defined_alpha) >= 3
    for row in report["metrics"]:
        section = row["judges"][judge["key"]]
        assert row["n_consensus"] == report["n_sample"] - LEFT_FOR_THE_VISITOR
        assert section["exact_agreement"] is not None and section["verdict"]["outcome"] in ("pass", "fail", "undecided")
    audit = Audit.objects.get(pk=project.source_audit_id)
    assert judge_validation_status(audit).startswith("judge validated on rubric v1")

    # The demo annotator has turns to label.
    visitor = User.objects.get(username="annotator")
    stage = project.stages.get()
    assert label_next(annotator=visitor, stage=stage) is not None

    client.force_login(User.objects.get(username="researcher"))
    page = client.get(reverse("annotation:judge-validation", args=[project.pk]))
    assert (
        page.status_code == 200 and "verdict-pass" in page.content.decode() or "verdict-fail" in page.content.decode()
    )

    labels = Label.objects.count()
    demo_seed(io.StringIO())
    assert AnnotationProject.objects.filter(name=DEMO_VALIDATION_NAME).count() == 1 and Label.objects.count() == labels
