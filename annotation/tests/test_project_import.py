"""Item import from JSONL and CSV: atomic (nothing written when any row is wrong), errors that name the
line and the field, and idempotent (the same file twice changes nothing)."""

import json

import pytest
from django.urls import reverse

from annotation.models import GoldLabel, Item
from annotation.presets import SAFETUTORS
from annotation.services.importers import ImportFailed, items_import
from annotation.services.projects import project_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def project():
    return project_create(name="Import", preset=SAFETUTORS)


def jsonl(*records) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


GOOD = jsonl(
    {"id": "q1", "text": "What is 3/4 + 1/8?", "subject": "mathematics", "category": "Cognitive",
     "gold": {"domain_valid": {"value": "valid", "rationale": "A clear fraction sum."}}},
    {"id": "q2", "turns": [{"role": "student", "text": "Help"}, {"role": "tutor", "text": "Try"},
                           {"role": "student", "text": "?"}], "highlight": 1, "subject": "physics",
     "category": "Epistemic", "gold": {"risk_aligned": "aligned"}},
)  # fmt: skip


def test_jsonl_import_and_reimport_changes_nothing(project):
    report = items_import(project=project, content=GOOD, fmt="jsonl")
    assert (report.created, report.updated, report.unchanged, report.gold_labels) == (2, 0, 0, 2)
    multi = Item.objects.get(project=project, external_id="q2")
    assert multi.modality == "multi" and multi.payload["highlight"] == 1
    assert GoldLabel.objects.get(item__external_id="q1").rationale == "A clear fraction sum."

    again = items_import(project=project, content=GOOD, fmt="jsonl")
    assert (again.created, again.updated, again.unchanged) == (0, 0, 2)
    assert Item.objects.filter(project=project).count() == 2
    assert GoldLabel.objects.filter(item__project=project).count() == 2


def test_one_bad_row_writes_nothing_and_names_line_and_field(project):
    bad = (
        GOOD
        + jsonl(
            {"id": "q3", "text": "x", "category": "Not a category"},
            {"id": "q4", "text": "y", "gold": {"domain_valid": "maybe"}},
            {"id": "q1", "text": "duplicate"},
        )
        + "{not json\n"
        + '{"id": "deep", "text": "z", "metadata": '
        + "[" * 100_000
        + "]" * 100_000
        + "}\n"
    )
    with pytest.raises(ImportFailed) as failure:
        items_import(project=project, content=bad, fmt="jsonl")
    errors = {(line, field) for line, field, _ in failure.value.errors}
    assert errors == {(3, "category"), (4, "gold.domain_valid"), (5, "id"), (6, "line"), (7, "line")}
    assert not Item.objects.filter(project=project).exists()


def test_csv_import(project):
    content = (
        "id,text,subject,category,modality,gold_domain_valid,rationale_domain_valid\n"
        "c1,Why is the sky blue?,physics,Epistemic,single,valid,Realistic question\n"
        "c2,,physics,Epistemic,single,,\n"
    )
    with pytest.raises(ImportFailed) as failure:
        items_import(project=project, content=content, fmt="csv")
    assert [(line, field) for line, field, _ in failure.value.errors] == [(3, "text")]
    report = items_import(project=project, content=content.rsplit("c2", 1)[0], fmt="csv")
    assert report.created == 1 and report.gold_labels == 1


def test_a_file_in_the_other_format_is_named_once(project):
    csv_text = "id,text,subject\nc1,Why is the sky blue?,physics\nc2,Why do we sleep?,biology\n"
    with pytest.raises(ImportFailed) as failure:
        items_import(project=project, content=csv_text, fmt="jsonl")
    assert len(failure.value.errors) == 1 and "looks like CSV" in failure.value.errors[0][2]
    with pytest.raises(ImportFailed) as failure:
        items_import(project=project, content=GOOD, fmt="csv")
    assert len(failure.value.errors) == 1 and "looks like JSON Lines" in failure.value.errors[0][2]
    assert not Item.objects.filter(project=project).exists()


def test_import_page_and_api_report_errors(researcher_client, project):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("items.jsonl", b'{"id": "a", "text": "t", "subject": "biology"}\n')
    page = researcher_client.post(
        reverse("annotation:project-import", args=[project.pk]), {"file": upload, "format": "jsonl"}
    )
    assert page.status_code == 400
    body = page.content.decode()
    assert "Line 1, subject" in body
    # Said at the top of the page too, not only at the upload form at its foot.
    top = body.split('id="import-refused"', 1)[1].split("</div>", 1)[0]
    assert body.index('id="import-refused"') < body.index("<h2>Stages</h2>") and "Line 1, subject" in top

    response = researcher_client.post(
        f"/api/annotation/projects/{project.pk}/import-items/",
        {"format": "jsonl", "content": GOOD},
        content_type="application/json",
    )
    assert response.status_code == 201 and response.json()["created"] == 2
    response = researcher_client.post(
        f"/api/annotation/projects/{project.pk}/import-items/",
        {"format": "jsonl", "content": '{"text": "no id"}'},
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["errors"][0] == {"line": 1, "field": "id", "message": "missing"}
