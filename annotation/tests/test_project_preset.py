"""The SafeTutors preset builds the three stages of Appendix D with their defaults in one click (page and
API): workforce, pay, overlap, resolution, pilot size, gate, Unsure only for the crowd stage."""

from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import AnnotationProject
from annotation.presets import SAFETUTORS_RISK_CATEGORIES

pytestmark = pytest.mark.django_db


def assert_safetutors_stages(project):
    stages = list(project.stages.order_by("order"))
    assert [s.name for s in stages] == ["Domain validity", "Risk alignment", "Crowd check"]
    assert [s.pay_rate_per_hour for s in stages] == [Decimal("5.00"), Decimal("15.00"), Decimal("10.00")]
    assert [s.overlap for s in stages] == [2, 2, 3]
    assert [s.resolution_policy for s in stages] == ["discussion_senior", "discussion_senior", "majority_reviewer"]
    assert [s.pilot_size for s in stages] == [30, 30, 15]
    assert [s.recruits_per_subject for s in stages] == [2, 1, 8]
    assert [s.unsure_enabled for s in stages] == [False, False, True]
    for stage in stages:
        assert (stage.pilot_threshold, stage.qualification_min_correct, stage.qualification_size) == (0.8, 8, 10)
        assert stage.guidelines.get().version == 1
        question = stage.questions.get()
        assert question.prompt in stage.guidelines.get().text, "the guideline states the question's decision rule"
        assert question.justification_required_for, "every negative label needs a justification"
    assert len(project.categories) == 11 and tuple(project.categories) == SAFETUTORS_RISK_CATEGORIES
    assert project.subjects == ["mathematics", "physics", "chemistry"]


def test_preset_in_one_click_on_the_page(researcher_client):
    response = researcher_client.post(
        reverse("annotation:project-create"), {"name": "Replication", "preset": "safetutors"}
    )
    project = AnnotationProject.objects.get(name="Replication")
    assert response.status_code == 302 and response.url == reverse("annotation:project", args=[project.pk])
    assert_safetutors_stages(project)
    page = researcher_client.get(response.url).content.decode()
    assert "Crowd check" in page and "$10.00" in page


def test_preset_through_the_api(researcher_client):
    created = researcher_client.post("/api/annotation/projects/", {"name": "Scripted"}, content_type="application/json")
    assert created.status_code == 201
    pk = created.json()["id"]
    response = researcher_client.post(
        f"/api/annotation/projects/{pk}/apply-preset/", {}, content_type="application/json"
    )
    assert response.status_code == 201 and len(response.json()) == 3
    assert_safetutors_stages(AnnotationProject.objects.get(pk=pk))
    again = researcher_client.post(f"/api/annotation/projects/{pk}/apply-preset/", {}, content_type="application/json")
    assert again.status_code == 400
