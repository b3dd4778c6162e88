"""Every door that builds a judge-validation project takes a count per stratum: the create page's field, the
API's per_stratum and judge_validation_create's --per-stratum; the command prints each stratum's inclusion
probability, and a count below one is refused."""

import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import AnnotationProject

from .judge_validation_setup import run_simulation_audit

pytestmark = pytest.mark.django_db


def per_stratum_of(project) -> tuple:
    sample = project.options["sample"]
    return sample["mode"], sample["per_stratum"], {row["chosen"] for row in sample["allocation"]}


def test_page_api_and_command_take_a_count_per_stratum(researcher_client):
    audit = run_simulation_audit("per-stratum doors audit", questions=2)
    out = io.StringIO()
    call_command("judge_validation_create", str(audit.pk), "--per-stratum", "1", "--training-pool", "2", stdout=out)
    by_command = AnnotationProject.objects.filter(source_audit_id=audit.pk).get()
    assert per_stratum_of(by_command) == ("per_stratum", 1, {1})
    assert "inclusion probability" in out.getvalue() and "asked 1.00" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("judge_validation_create", str(audit.pk), "--per-stratum", "0", stdout=io.StringIO())

    created = researcher_client.post(
        reverse("annotation-jv-create"),
        {"audit": audit.pk, "per_stratum": 2, "training_pool": 2},
        content_type="application/json",
    )
    assert created.status_code == 201, created.content
    assert created.json()["sample"]["mode"] == "per_stratum"
    assert all(0 < row["inclusion_probability"] <= 1 for row in created.json()["sample"]["allocation"])
    by_api = AnnotationProject.objects.get(pk=created.json()["project"])
    assert per_stratum_of(by_api)[:2] == ("per_stratum", 2)
    refused = researcher_client.post(
        reverse("annotation-jv-create"), {"audit": audit.pk, "per_stratum": 0}, content_type="application/json"
    )
    assert refused.status_code == 400

    before = set(AnnotationProject.objects.values_list("pk", flat=True))
    page = researcher_client.post(
        reverse("annotation:judge-validation-create"), {"audit": audit.pk, "per_stratum": "1", "training_pool": 2}
    )
    assert page.status_code == 302
    [by_page] = AnnotationProject.objects.exclude(pk__in=before)
    assert per_stratum_of(by_page) == ("per_stratum", 1, {1})
    report = researcher_client.get(page["Location"]).content.decode()
    assert "1 turn from every stratum" in report and "data-inclusion-probability" in report
    # An empty field samples in proportion, as before.
    researcher_client.post(
        reverse("annotation:judge-validation-create"),
        {"audit": audit.pk, "size": 6, "per_stratum": "", "training_pool": 2},
    )
    [proportional] = AnnotationProject.objects.exclude(pk__in=before | {by_page.pk})
    assert per_stratum_of(proportional)[:2] == ("proportional", None)
    refused_page = researcher_client.post(
        reverse("annotation:judge-validation-create"), {"audit": audit.pk, "per_stratum": "0"}
    )
    assert refused_page.status_code == 400 and "at least one turn" in refused_page.content.decode()
