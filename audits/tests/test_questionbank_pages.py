"""Question bank pages: filters, counts per domain, each import's funnel, question detail, upload, access."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def samples_imported():
    return {
        "socrateach": question_import_from_path(source="socrateach", path=SAMPLES / "socrateach_multi_sample.json"),
        "sciq": question_import_from_path(source="sciq", path=SAMPLES / "sciq_sample.json"),
        "jsonl": question_import_from_path(source="jsonl", path=SAMPLES / "generic_sample.jsonl"),
    }


def test_bank_page_shows_counts_and_funnels(researcher_client, samples_imported):
    response = researcher_client.get(reverse("audits:questionbank"))
    assert response.status_code == 200
    counts = {row["domain"]: row["count"] for row in response.context["counts_all"]}
    assert counts == {"mathematics": 5 + 3, "physics": 14 + 2, "chemistry": 14 + 3}
    html = response.content.decode()
    for step in (
        "dialogues in",
        "≥ 2 student errors",
        "no ground-truth disclosure",
        "probability ≥ 0.65",
        "new in bank",
    ):
        assert step in html
    assert 'data-step="dialogues in">14<' in html


def test_filters_by_domain_source_and_import(researcher_client, samples_imported):
    url = reverse("audits:questionbank")
    physics = researcher_client.get(url, {"domain": "physics"}).context["paginator"].count
    assert physics == 16
    sciq_physics = researcher_client.get(url, {"domain": "physics", "source": "sciq"}).context["paginator"].count
    assert sciq_physics == 14
    by_import = researcher_client.get(url, {"import": samples_imported["socrateach"].pk}).context["paginator"].count
    assert by_import == 5
    searched = researcher_client.get(url, {"q": "rectangle"}).context["questions"]
    assert [q.source_id for q in searched] == ["st-0001"]


def test_question_detail_shows_the_reference_dialogue(researcher_client, samples_imported):
    question = Question.objects.get(source_id="st-0003")
    response = researcher_client.get(reverse("audits:question-detail", args=[question.pk]))
    html = response.content.decode()
    assert "Solve for x: 3x + 7 = 25." in html
    assert 'id="reference-dialogue"' in html
    assert "Subtract 7, so 3x = 18." in html


def test_upload_on_the_page_imports_and_shows_the_funnel(researcher_client):
    upload = SimpleUploadedFile("socrateach.json", (SAMPLES / "socrateach_multi_sample.json").read_bytes())
    response = researcher_client.post(
        reverse("audits:question-import-new"),
        {"source": "socrateach", "file": upload, "min_exchanges": 4, "min_student_errors": 2,
         "min_correct_after_last_error": 1, "forbid_disclosure": "on", "reply_labels": "auto"},
        follow=True,
    )  # fmt: skip
    assert response.status_code == 200
    question_import = QuestionImport.objects.get()
    assert question_import.status == "done"
    assert question_import.parameters["min_exchanges"] == 4
    html = response.content.decode()
    assert "5 new question(s)" in html
    assert 'data-step="questions kept (problems with a passing dialogue)">5<' in html


def test_rejected_upload_shows_the_error(researcher_client):
    upload = SimpleUploadedFile("bad.jsonl", b'{"domain": "physics", "text": "q", "answer": "1"}\n{"domain": 3}\n')
    response = researcher_client.post(
        reverse("audits:question-import-new"), {"source": "jsonl", "file": upload}, follow=True
    )
    html = response.content.decode()
    assert "nothing was imported" in html
    assert "line 2, field &#x27;domain&#x27;" in html
    assert not Question.objects.exists()


def test_running_import_polls_its_status(researcher_client):
    question_import = QuestionImport.objects.create(source="generic", original_filename="big.jsonl",
                                                    status="running", progress_done=25, progress_total=100)  # fmt: skip
    html = researcher_client.get(reverse("audits:question-import-detail", args=[question_import.pk])).content.decode()
    assert 'hx-trigger="every 1s"' in html
    assert 'aria-valuenow="25"' in html
    question_import.status = "done"
    question_import.save()
    partial = researcher_client.get(
        reverse("audits:question-import-status", args=[question_import.pk])
    ).content.decode()
    assert "hx-trigger" not in partial


def test_pages_are_for_researchers(annotator_client, samples_imported):
    question = Question.objects.first()
    for url in (
        reverse("audits:questionbank"),
        reverse("audits:question-detail", args=[question.pk]),
        reverse("audits:question-import-detail", args=[samples_imported["sciq"].pk]),
    ):
        assert annotator_client.get(url).status_code == 403
    assert Client().get(reverse("audits:questionbank")).status_code == 302


def test_a_nul_character_in_a_filter_is_refused_on_the_page_and_in_the_api(researcher_client, samples_imported):
    """PostgreSQL refuses NUL in text, so it is refused first — for every view, by
    edufair_web.request_text — with a 400 that says so, never a database error (found in review: only the API
    used to check)."""
    page = researcher_client.get(reverse("audits:questionbank"), {"q": "gravity\x00"})
    assert page.status_code == 400
    assert "a NUL character" in page.content.decode()
    api = researcher_client.get("/api/questions/", {"domain": "physics\x00"})
    assert api.status_code == 400 and "NUL" in api.json()["detail"]
