"""Import errors read as sentences on the page and in the API, never as a Python list."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.presets import SAFETUTORS
from annotation.services.importers import ImportFailed, error_sentence
from annotation.services.projects import project_create


@pytest.mark.pure
def test_an_error_is_a_sentence():
    assert error_sentence(2, "id", "missing") == "Line 2, id: missing."
    assert error_sentence(0, "file", "no items in the file") == "The file: no items in the file."
    assert error_sentence(3, "subject", "did you mean 'physics'?") == "Line 3, subject: did you mean 'physics'?"
    failed = ImportFailed([(1, "id", "missing"), (2, "text", "an item needs text or turns")], total=5)
    assert failed.sentences(1) == ["Line 1, id: missing.", "There are 4 more errors.", "Nothing was imported."]


@pytest.mark.django_db
def test_the_page_and_the_api_list_sentences(researcher_client):
    project = project_create(name="Errors", preset=SAFETUTORS)
    upload = SimpleUploadedFile("items.jsonl", b'{"text": "no id"}\n{"id": "b", "text": "t", "subject": "maths"}\n')
    page = researcher_client.post(
        reverse("annotation:project-import", args=[project.pk]), {"file": upload, "format": "jsonl"}
    )
    body = page.content.decode()
    assert page.status_code == 400
    assert "<li>Line 1, id: missing.</li>" in body and "<li>Nothing was imported.</li>" in body
    assert "[&#x27;" not in body and "[&quot;" not in body and "['" not in body

    response = researcher_client.post(
        f"/api/annotation/projects/{project.pk}/import-items/",
        {"format": "jsonl", "content": '{"text": "no id"}'},
        content_type="application/json",
    )
    assert response.json()["sentences"] == ["Line 1, id: missing.", "Nothing was imported."]
