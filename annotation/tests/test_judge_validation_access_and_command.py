"""Judge-validation pages and API are for researchers only; `manage.py judge_validation_create` builds the
project from an audit and prints the allocation; the create page does the same in one form."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import AnnotationProject

from .judge_validation_setup import run_simulation_audit

pytestmark = pytest.mark.django_db


def test_annotators_get_403_on_pages_and_api(annotator_client):
    for url in (
        reverse("annotation:judge-validations"),
        reverse("annotation:judge-validation-create"),
        reverse("annotation-jv-audit-status", args=[1]),
    ):
        assert annotator_client.get(url).status_code == 403, url
    assert annotator_client.post(reverse("annotation-jv-create"), {"audit": 1}).status_code == 403


def test_command_and_create_page_build_the_project(researcher_client):
    audit = run_simulation_audit("command audit", questions=2)
    out = io.StringIO()
    call_command("judge_validation_create", str(audit.pk), "--size", "12", "--seed", "4", stdout=out)
    project = AnnotationProject.objects.get(source_audit_id=audit.pk)
    assert f"Validation project #{project.pk}" in out.getvalue() and "12 turns (seed 4)" in out.getvalue()
    assert "persona cue hidden" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("judge_validation_create", "999999", stdout=io.StringIO())

    response = researcher_client.post(
        reverse("annotation:judge-validation-create"),
        {"audit": audit.pk, "size": 8, "seed": 1, "overlap": 3, "training_pool": 4},
    )
    second = AnnotationProject.objects.filter(source_audit_id=audit.pk).exclude(pk=project.pk).get()
    assert response.status_code == 302 and response["Location"].endswith(f"/judge-validation/{second.pk}/")
    page = researcher_client.get(response["Location"])
    assert page.status_code == 200 and "Human α before" in page.content.decode()
    # A fresh project: no all-zero confusion matrices, and the title says its name once.
    body = page.content.decode()
    assert 'class="table confusion"' not in body and "No judge has been compared" in body
    assert f"<h1>{second.name}</h1>" in body and "Judge validation: Judge validation" not in body
    status = researcher_client.get(reverse("annotation-jv-audit-status", args=[audit.pk])).json()
    assert status["validated"] is False and status["text"] == "not validated"
