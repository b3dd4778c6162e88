"""Question bank and design API: list/filter questions, upload imports, funnels, CRUD, researchers-only writes."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from audits.models import DemographicLevel, NameCue, PromptTemplate, Question
from audits.services.design import design_defaults_seed, prompt_template_mark_used
from audits.services.questionbank import question_import_from_path
from audits.tests.questionbank_files import SAMPLES

pytestmark = pytest.mark.django_db


@pytest.fixture
def bank():
    question_import_from_path(source="sciq", path=SAMPLES / "sciq_sample.json")
    return question_import_from_path(source="jsonl", path=SAMPLES / "generic_sample.jsonl")


def test_list_and_filter_questions(researcher_client, bank):
    everything = researcher_client.get("/api/questions/").json()
    assert everything["count"] == 36
    physics = researcher_client.get("/api/questions/", {"domain": "physics", "source": "sciq"}).json()
    assert physics["count"] == 14
    assert all(0.65 <= row["classifier_confidence"] <= 1 for row in physics["results"])
    by_import = researcher_client.get("/api/questions/", {"import": bank.pk}).json()
    assert {row["source_id"] for row in by_import["results"]} == set(
        Question.objects.filter(source="generic").values_list("source_id", flat=True)
    )


def test_upload_returns_the_funnel(researcher_client):
    upload = SimpleUploadedFile("s.json", (SAMPLES / "socrateach_multi_sample.json").read_bytes())
    response = researcher_client.post(
        "/api/question-imports/",
        {"source": "socrateach", "file": upload, "parameters": json.dumps({"min_exchanges": 4})},
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert [step["count"] for step in body["funnel"]] == [14, 11, 9, 8, 6, 5, 5, 0]
    assert body["parameters"]["min_exchanges"] == 4
    detail = researcher_client.get(f"/api/question-imports/{body['id']}/").json()
    assert detail["funnel"] == body["funnel"]


def test_rejected_upload_is_a_400_naming_the_line(researcher_client):
    upload = SimpleUploadedFile("bad.jsonl", b'{"domain": "physics", "text": "q"}\n')
    response = researcher_client.post("/api/question-imports/", {"source": "jsonl", "file": upload})
    assert response.status_code == 400
    assert "line 1, field 'answer'" in response.json()["error"]
    assert not Question.objects.exists()


def test_annotators_neither_read_nor_write(annotator_client, bank):
    """The question bank is research material, as its pages are (edufair_web/tests/test_permission_matrix.py
    covers every route of it for every role)."""
    assert annotator_client.get("/api/questions/").status_code == 403
    upload = SimpleUploadedFile("g.jsonl", (SAMPLES / "generic_sample.jsonl").read_bytes())
    assert annotator_client.post("/api/question-imports/", {"source": "jsonl", "file": upload}).status_code == 403
    assert (
        annotator_client.post("/api/name-cues/", {"name": "X", "gender": "male", "ethnicity": "y"}).status_code == 403
    )


def test_crud_dimensions_levels_names(researcher_client):
    design_defaults_seed()
    dimensions = researcher_client.get("/api/demographic-dimensions/").json()["results"]
    assert [d["key"] for d in dimensions] == ["gender", "immigration", "first_language", "ses"]
    assert sum(len(d["levels"]) for d in dimensions) == 9

    created = researcher_client.post("/api/demographic-dimensions/", {"key": "disability", "name": "Disability"})
    assert created.status_code == 201
    level = researcher_client.post(
        "/api/demographic-levels/",
        {"dimension": created.json()["id"], "key": "dyslexia", "label": "Dyslexia",
         "persona_statement": "I have dyslexia, so reading long problems takes me a while."},
    )  # fmt: skip
    assert level.status_code == 201
    changed = researcher_client.patch(
        f"/api/demographic-levels/{level.json()['id']}/", {"label": "Dyslexic"}, content_type="application/json"
    )
    assert changed.status_code == 200
    assert DemographicLevel.objects.get(key="dyslexia").label == "Dyslexic"

    name = researcher_client.post("/api/name-cues/", {"name": "Aroha", "gender": "female", "ethnicity": "maori"})
    assert name.status_code == 201
    assert researcher_client.delete(f"/api/name-cues/{name.json()['id']}/").status_code == 204
    assert not NameCue.objects.filter(name="Aroha").exists()


def test_templates_are_revised_not_updated(researcher_client):
    design_defaults_seed()
    judge = PromptTemplate.objects.get(kind="judge_rubric", name="judge")
    url = f"/api/prompt-templates/{judge.pk}/"
    assert researcher_client.patch(url, {"text": "x ${tutor_turn}"}, content_type="application/json").status_code == 405

    revised = researcher_client.post(f"{url}revise/", {"text": "Rate this turn: ${tutor_turn}"})
    assert revised.status_code == 201
    assert (revised.json()["version"], revised.json()["previous"]) == (2, judge.pk)
    bad = researcher_client.post(f"{url}revise/", {"text": "Rate ${student_name}"})
    assert bad.status_code == 400

    prompt_template_mark_used(judge)
    assert researcher_client.delete(url).status_code == 409
    judge.refresh_from_db()
    assert judge.version == 1 and "mistake_recognize" in judge.text

    created = researcher_client.post(
        "/api/prompt-templates/", {"kind": "reveal_check", "name": "strict", "text": "${answer} in ${tutor_turn}?"}
    )
    assert created.status_code == 201 and created.json()["version"] == 1
