"""An import into a project whose stage hands out an explicit item list says the new items will not reach that
stage's annotators, and offers to add them (page button and API)."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Item, StageLabelling
from annotation.presets import SAFETUTORS
from annotation.services.importers import items_import
from annotation.services.labelling import stage_item_rule_set
from annotation.services.projects import project_create

pytestmark = pytest.mark.django_db


def jsonl(*ids, gold=()) -> bytes:
    rows = [
        {"id": i, "text": f"Question {i}?", "subject": "physics", "category": "Cognitive"}
        | ({"gold": {"domain_valid": "valid"}} if i in gold else {})
        for i in ids
    ]
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


@pytest.fixture
def listed():
    """A SafeTutors project whose stage 1 hands out an explicit list naming one item."""
    project = project_create(name="Listed", preset=SAFETUTORS)
    items_import(project=project, content=jsonl("first"), fmt="jsonl")
    stage = project.stages.get(order=1)
    stage_item_rule_set(stage=stage, rule="list", item_ids=[Item.objects.get(external_id="first").pk])
    return stage


def listed_ids(stage) -> list[str]:
    ids = StageLabelling.objects.get(stage=stage).item_ids
    return [Item.objects.get(pk=pk).external_id for pk in ids]


def test_the_import_page_says_so_and_its_button_adds_the_items(researcher_client, listed):
    upload = SimpleUploadedFile("items.jsonl", jsonl("a1", "a2", "g1", gold={"g1"}))
    page = researcher_client.post(
        reverse("annotation:project-import", args=[listed.project_id]), {"file": upload, "format": "jsonl"}
    )
    body = page.content.decode()
    assert page.status_code == 200
    # Gold items go to training, so only the two others are said to be left off.
    assert (
        "2 items were imported; stage 1 (Domain validity) uses an explicit item list, so they will not reach "
        "its annotators until added." in body
    )
    assert 'value="a1 a2"' in body and reverse("annotation:stage-action", args=[listed.pk, "add_items"]) in body

    added = researcher_client.post(
        reverse("annotation:stage-action", args=[listed.pk, "add_items"]), {"items": "a1 a2"}, follow=True
    )
    assert "2 items added to the stage&#x27;s item list." in added.content.decode()
    assert listed_ids(listed) == ["first", "a1", "a2"]


def test_an_import_the_list_already_names_says_nothing(researcher_client, listed):
    upload = SimpleUploadedFile("items.jsonl", jsonl("first"))
    page = researcher_client.post(
        reverse("annotation:project-import", args=[listed.project_id]), {"file": upload, "format": "jsonl"}
    )
    assert page.status_code == 302


def test_the_api_answers_the_notice_and_adds_the_items(researcher_client, listed):
    response = researcher_client.post(
        f"/api/annotation/projects/{listed.project_id}/import-items/",
        {"format": "jsonl", "content": jsonl("b1").decode()},
        content_type="application/json",
    )
    data = response.json()
    assert response.status_code == 201
    assert data["notices"] == [
        "1 item was imported; stage 1 (Domain validity) uses an explicit item list, so it will not reach its "
        "annotators until added."
    ]
    (left_off,) = data["left_off_lists"]
    assert left_off["stage"] == listed.pk and left_off["external_ids"] == ["b1"]

    added = researcher_client.post(
        f"/api/annotation/stages/{listed.pk}/add-items/",
        {"item_ids": left_off["item_ids"]},
        content_type="application/json",
    )
    assert added.status_code == 200 and added.json() == {"added": 1, "listed": 2}
    assert listed_ids(listed) == ["first", "b1"]

    not_a_list = listed.project.stages.get(order=2)
    refused = researcher_client.post(
        f"/api/annotation/stages/{not_a_list.pk}/add-items/",
        {"item_ids": left_off["item_ids"]},
        content_type="application/json",
    )
    assert refused.status_code == 400 and "explicit item list" in json.dumps(refused.json())
