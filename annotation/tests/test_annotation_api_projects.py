"""Researchers script a project through the API (questions, stage, items with gold, guideline, worked
example, training sets, enrolment); annotators cannot, and read only their own enrolments."""

import json

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def post(client, url, body):
    return client.post(url, json.dumps(body), content_type="application/json")


def test_script_a_project_end_to_end(researcher_client, make_user):
    project = post(
        researcher_client, "/api/annotation/projects/", {"name": "API", "categories": ["A", "B"], "subjects": ["maths"]}
    ).json()  # noqa: E501
    question = post(
        researcher_client,
        "/api/annotation/questions/",
        {
            "project": project["id"],
            "key": "ok",
            "prompt": "OK?",
            "choices": [{"value": "y", "label": "Yes", "key": "1"}, {"value": "n", "label": "No", "key": "2"}],
        },  # noqa: E501
    )
    assert question.status_code == 201, question.content
    stage = post(
        researcher_client,
        "/api/annotation/stages/",
        {
            "project": project["id"],
            "order": 1,
            "name": "Only",
            "questions": [question.json()["id"]],
            "pilot_size": 2,
            "qualification_size": 2,
            "qualification_min_correct": 2,
        },  # noqa: E501
    )
    assert stage.status_code == 201, stage.content
    stage_id = stage.json()["id"]
    lines = "\n".join(
        json.dumps(
            {"id": f"i{n}", "text": f"item {n}", "subject": "maths", "category": "AB"[n % 2], "gold": {"ok": "y"}}
        )
        for n in range(6)
    )
    imported = post(
        researcher_client,
        f"/api/annotation/projects/{project['id']}/import-items/",
        {"format": "jsonl", "content": lines},
    )  # noqa: E501
    assert imported.json()["created"] == 6
    guideline = post(researcher_client, "/api/annotation/guidelines/", {"stage": stage_id, "text": "# Read me"})
    assert guideline.status_code == 201 and guideline.json()["version"] == 1
    items = researcher_client.get(f"/api/annotation/items/?project={project['id']}").json()["results"]
    example = post(
        researcher_client,
        "/api/annotation/worked-examples/",
        {
            "stage": stage_id,
            "item": items[0]["id"],
            "question": question.json()["id"],
            "kind": "borderline",
            "value": "y",
            "rationale": "why",
        },  # noqa: E501
    )
    assert example.status_code == 201, example.content
    assert post(
        researcher_client, f"/api/annotation/stages/{stage_id}/choose-training-set/", {"phase": "pilot"}
    ).json()["even"]  # noqa: E501
    assert (
        post(
            researcher_client, f"/api/annotation/stages/{stage_id}/choose-training-set/", {"phase": "qualification"}
        ).status_code
        == 201
    )  # noqa: E501
    annotator = make_user("annotator")
    enrolled = post(researcher_client, "/api/annotation/enrollments/", {"stage": stage_id, "user": annotator.pk})
    assert enrolled.status_code == 201

    client = Client()
    client.force_login(annotator)
    assert client.get(f"/api/annotation/training/{stage_id}/").json()["step"] == "guideline"
    assert post(client, "/api/annotation/projects/", {"name": "not mine"}).status_code == 403
    assert post(client, "/api/annotation/enrollments/", {"stage": stage_id, "user": annotator.pk}).status_code == 403
    own = client.get("/api/annotation/enrollments/").json()["results"]
    assert [e["user"] for e in own] == [annotator.pk]


def test_label_validation_errors_name_the_question(annotator_client, annotator):
    from .training_setup import build_stage, enrol, through_examples

    s = build_stage(pilot=2)
    through_examples(s, enrol(s, annotator))
    url = f"/api/annotation/stages/{s.stage.pk}/labels/"
    no_reason = post(
        annotator_client, url, {"item": s.pilot_items[0].pk, "phase": "pilot", "answers": {"valid": {"value": "no"}}}
    )  # noqa: E501
    assert no_reason.status_code == 400
    assert "justification" in no_reason.json()["answers"]["valid"]
    unsure = post(
        annotator_client, url, {"item": s.pilot_items[0].pk, "phase": "pilot", "answers": {"valid": {"unsure": True}}}
    )  # noqa: E501
    assert unsure.status_code == 400 and "Unsure" in unsure.json()["answers"]["valid"]
    not_pilot = post(
        annotator_client,
        url,
        {"item": s.qualification_items[0].pk, "phase": "pilot", "answers": {"valid": {"value": "yes"}}},
    )  # noqa: E501
    assert not_pilot.status_code == 404


def test_list_filters_take_ids_and_refuse_anything_else(client, researcher):
    """`?project=` / `?stage=` narrow the lists; a value that is not an id is a 400 naming the parameter."""
    client.force_login(researcher)
    assert client.get("/api/annotation/items/?project=999999").json()["results"] == []
    for url in ("/api/annotation/items/?project=abc", "/api/annotation/guidelines/?stage=1;DROP"):
        response = client.get(url)
        assert response.status_code == 400
        assert list(response.json()) == [url.split("?")[1].split("=")[0]]
