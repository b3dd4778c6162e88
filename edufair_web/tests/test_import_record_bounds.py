"""Every importer, at every door, refuses a record over IMPORT_RECORD_MAX_BYTES naming it and the limit, writes
nothing, and leaves no uploaded file behind in MEDIA_ROOT; a successful import leaves none either."""

import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.models import AnnotationProject, GoldLabel, Item, Label
from annotation.services.projects import project_create, question_create, stage_create
from annotation.tests.judge_validation_excerpts import BEA_DEV
from annotation.tests.main_setup import YES_NO
from audits.models import Question, QuestionImport
from audits.services.questionbank import question_import_submit
from audits.tasks import question_import_run_task

LIMIT = 2000  # every good record below is well under it, every big one well over
PAD = "x" * 5000
REFUSAL = re.compile(r"(line|record|task) 2 is [\d,]+ bytes; a record may be at most 2,000 bytes")


def _upload(name: str, content: str) -> io.BytesIO:
    handle = io.BytesIO(content.encode())
    handle.name = name
    return handle


def _questions(big: bool) -> str:
    second = {"domain": "physics", "text": "Why is the sky blue?" + (PAD if big else ""), "answer": "scattering"}
    return json.dumps({"domain": "physics", "text": "What is 2 + 2?", "answer": 4}) + "\n" + json.dumps(second) + "\n"


def _items_jsonl(big: bool) -> str:
    return json.dumps({"id": "a", "text": "An item"}) + "\n" + json.dumps({"id": "b", "text": PAD if big else "b"})


def _items_csv(big: bool) -> str:
    return f"id,text\nb,{PAD if big else 'b'}\na,An item\n"


def _bea(big: bool) -> str:
    records = json.loads(json.dumps(BEA_DEV))
    if big:
        next(iter(records[1]["tutor_responses"].values()))["response"] += PAD
    return json.dumps(records)


def _label_studio(big: bool) -> str:
    def task(number: int, text: str) -> dict:
        result = [{"from_name": "q1", "to_name": "item", "type": "choices", "value": {"choices": ["yes"]}}]
        return {"id": number, "data": {"text": text}, "annotations": [{"completed_by": 4, "result": result}]}

    return json.dumps([task(1, "An item"), task(2, "Another" + (PAD if big else ""))])


def _question_page(client, api, project, content, media):
    return client.post(
        reverse("audits:question-import-new"), {"source": "jsonl", "file": _upload("q.jsonl", content)}, follow=True
    )


def _question_api(client, api, project, content, media):
    return api.post("/api/question-imports/", {"source": "jsonl", "file": _upload("q.jsonl", content)})


def _question_worker(client, api, project, content, media):
    """The Celery path: the upload is stored and queued, and the task (called as a worker calls it) imports it."""
    queued = question_import_submit(
        source="jsonl", uploaded_file=SimpleUploadedFile("q.jsonl", content.encode()), inline_max_bytes=0
    )
    assert queued.status == QuestionImport.Status.QUEUED
    assert _files(media) != []  # kept while queued: the worker reads it
    question_import_run_task(queued.pk)
    return QuestionImport.objects.get(pk=queued.pk).error


def _items_page(client, api, project, content, media):
    url = reverse("annotation:project-import", args=[project.pk])
    return client.post(url, {"format": "jsonl", "file": _upload("i.jsonl", content)})


def _items_api_file(client, api, project, content, media):
    url = f"/api/annotation/projects/{project.pk}/import-items/"
    return api.post(url, {"format": "csv", "file": _upload("i.csv", content)})


def _items_api_text(client, api, project, content, media):
    url = f"/api/annotation/projects/{project.pk}/import-items/"
    return api.post(url, {"format": "jsonl", "content": content}, format="json")


def _bea_page(client, api, project, content, media):
    return client.post(reverse("annotation:judge-validations"), {"file": _upload("bea.json", content)}, follow=True)


def _bea_api(client, api, project, content, media):
    return api.post(reverse("annotation-jv-mrbench"), {"file": _upload("bea.json", content)})


def _label_studio_page(client, api, project, content, media):
    url = reverse("annotation:label-studio-import", args=[project.pk])
    return client.post(url, {"file": _upload("ls.json", content)})


def _label_studio_api(client, api, project, content, media):
    return api.post(reverse("annotation-label-studio-import", args=[project.pk]), {"content": content}, format="json")


@dataclass(frozen=True)
class Door:
    name: str
    content: Callable[[bool], str]
    send: Callable
    written: Callable[[], int]


def _questions_written() -> int:
    return Question.objects.count()


def _items_written() -> int:
    return Item.objects.count() + GoldLabel.objects.count() + Label.objects.count()


def _projects_written() -> int:
    return AnnotationProject.objects.count() + _items_written()


DOORS = [
    Door("questions: page", _questions, _question_page, _questions_written),
    Door("questions: API", _questions, _question_api, _questions_written),
    Door("questions: worker", _questions, _question_worker, _questions_written),
    Door("items: page (JSONL)", _items_jsonl, _items_page, _items_written),
    Door("items: API file (CSV)", _items_csv, _items_api_file, _items_written),
    Door("items: API text (JSONL)", _items_jsonl, _items_api_text, _items_written),
    Door("MRBench/BEA: page", _bea, _bea_page, _projects_written),
    Door("MRBench/BEA: API", _bea, _bea_api, _projects_written),
    Door("Label Studio: page", _label_studio, _label_studio_page, _items_written),
    Door("Label Studio: API", _label_studio, _label_studio_api, _items_written),
]


def _files(media) -> list:
    return [path for path in media.rglob("*") if path.is_file()] if media.exists() else []


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.IMPORT_RECORD_MAX_BYTES = LIMIT
    return settings.MEDIA_ROOT


@pytest.fixture
def target(db):
    project = project_create(name="Record bounds", categories=["A"], subjects=["maths"])
    question = question_create(project=project, key="q1", prompt="Question q1?", choices=YES_NO)
    stage_create(project=project, name="Stage 1", questions=[question], overlap=1)
    return project


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.force_authenticate(researcher)
    return client


def _answer(door: Door, researcher_client, api, target, media, big: bool) -> str:
    answer = door.send(researcher_client, api, target, door.content(big), media)
    if isinstance(answer, str):
        return answer
    assert answer.status_code < 500, answer.content[:500]
    return answer.content.decode()


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
def test_an_oversized_record_is_refused_with_nothing_written_and_no_file_left(
    door, researcher_client, api, target, media
):
    before = door.written()
    answer = _answer(door, researcher_client, api, target, media, big=True)
    assert REFUSAL.search(answer), answer[:2000]
    assert door.written() == before
    assert _files(media) == []


@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.name)
def test_a_successful_import_leaves_no_file_behind(door, researcher_client, api, target, media):
    before = door.written()
    answer = _answer(door, researcher_client, api, target, media, big=False)
    assert door.written() > before, answer[:2000]
    assert _files(media) == []
    assert not QuestionImport.objects.exclude(file="").exists()
