"""A researcher marks a failed recruit as replaced (page and API); the replacement is enrolled in the same
stage; a recruit who passed cannot be replaced; annotators cannot mark replacements."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Enrollment
from annotation.selectors.projects import pass_rate_table
from annotation.services.enrollment import enrollment_create

from .training_setup import build_stage, walk_to_decision

pytestmark = pytest.mark.django_db


def test_researcher_marks_a_replacement_on_the_stage_page(researcher_client, make_user):
    s = build_stage(pilot=2)
    failed = walk_to_decision(s, make_user("annotator"), pilot_values=["no", "yes"])  # 0 of 2 with gold
    assert failed.gate_passed is False
    newcomer = make_user("annotator")
    page = researcher_client.get(reverse("annotation:stage", args=[s.stage.pk])).content.decode()
    assert "Mark replaced" in page
    response = researcher_client.post(
        reverse("annotation:enrollment-replace", args=[failed.pk]), {"replacement": newcomer.pk, "note": "left"}
    )
    assert response.status_code == 302
    failed.refresh_from_db()
    assert failed.status == "replaced" and failed.gate_passed is False
    assert failed.replaced_by.user == newcomer
    assert failed.replaced_by.stage == s.stage
    row = pass_rate_table(s.project)[0]
    assert (row["recruited"], row["passed"], row["failed"], row["replaced"], row["in_training"]) == (2, 0, 1, 1, 1)
    assert row["pass_rate_text"] == "0 of 1 (0.0%)"


def test_passed_recruits_cannot_be_replaced_and_annotators_cannot_replace(researcher_client, make_user):
    s = build_stage(pilot=2)
    passed = walk_to_decision(s, make_user("annotator"))
    response = researcher_client.post(
        f"/api/annotation/enrollments/{passed.pk}/replace/", {}, content_type="application/json"
    )
    assert response.status_code == 400
    other = enrollment_create(stage=s.stage, user=make_user("annotator"))
    client = Client()  # a second browser: researcher_client shares pytest-django's `client`
    client.force_login(make_user("annotator"))
    assert client.post(f"/api/annotation/enrollments/{other.pk}/replace/", {}).status_code in (403, 404)
    assert client.post(reverse("annotation:enrollment-replace", args=[other.pk])).status_code == 403
    ok = researcher_client.post(
        f"/api/annotation/enrollments/{other.pk}/replace/", {"note": "dropped out"}, content_type="application/json"
    )
    assert ok.status_code == 200 and ok.json()["status"] == "replaced"
    assert Enrollment.objects.get(pk=other.pk).replacement_note == "dropped out"
