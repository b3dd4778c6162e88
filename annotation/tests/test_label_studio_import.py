"""The Label Studio import: an export's tasks and annotations become items, labels (by question key,
phase and round kept), pseudonymous annotators, gold and adjudicated finals, atomically and once; what
cannot be mapped — a flattened file, a file without annotations, an unknown question or value, another
kind of region, an unknown annotator — is refused with a message and nothing is written; a label that
differs from one stored refuses its task alone. Page and API are for researchers."""

import copy
import json

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.label_studio.export import label_studio_tasks
from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.label_studio.pseudonyms import deployment_annotator_email
from annotation.label_studio.reading import annotator_identity, annotator_username
from annotation.models import Adjudication, GoldLabel, Item, Label
from annotation.services.projects import project_create, question_create, stage_create

from .label_studio_setup import labelled_project
from .main_setup import YES_NO

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(make_user):
    return labelled_project(make_user)


@pytest.fixture
def target():
    project = project_create(name="Imported", categories=["A", "B"], subjects=["maths", "physics"])
    question = question_create(project=project, key="q1", prompt="Question q1?", choices=YES_NO)
    stage_create(project=project, name="Stage 1", questions=[question], overlap=2)
    return project


def _labels(project) -> set[tuple]:
    return set(
        Label.objects.filter(assignment__item__project=project).values_list(
            "assignment__item__external_id",
            "assignment__annotator__username",
            "question__key",
            "phase",
            "round",
            "value",
            "unsure",
            "justification",
        )
    )


def test_an_export_comes_back_whole_and_a_second_import_changes_nothing(labelled, target):
    tasks = label_studio_tasks(labelled.project)
    report = label_studio_import(project=target, content=json.dumps(tasks))
    assert (report.items_created, report.annotators_created, report.gold_labels, report.adjudications) == (3, 2, 1, 2)
    assert report.labels_created == 5 and report.warnings == []
    usernames = {
        u.pk: annotator_username(annotator_identity({"email": deployment_annotator_email(u.pk)}))
        for u in labelled.users
    }
    expected = {
        (ext, usernames[user_id], key, phase, round_, value, unsure, justification)
        for ext, user_id, key, phase, round_, value, unsure, justification in Label.objects.filter(
            assignment__item__project=labelled.project
        ).values_list(
            "assignment__item__external_id",
            "assignment__annotator_id",
            "question__key",
            "phase",
            "round",
            "value",
            "unsure",
            "justification",
        )
    }
    assert _labels(target) == expected
    assert {(i.external_id, json.dumps(i.payload, sort_keys=True)) for i in Item.objects.filter(project=target)} == {
        (i.external_id, json.dumps(i.payload, sort_keys=True)) for i in Item.objects.filter(project=labelled.project)
    }
    assert set(
        Adjudication.objects.filter(stage__project=target).values_list("item__external_id", "method", "final_value")
    ) == {(f.item.external_id, f.method, f.final_value) for f in labelled.finals}
    assert GoldLabel.objects.get(item__project=target).value == "yes"
    imported = User.objects.filter(username__in=usernames.values())
    assert all(not u.has_usable_password() and not u.email and u.username.startswith("ls-") for u in imported)
    again = label_studio_import(project=target, content=json.dumps(tasks).encode())
    assert (again.items_created, again.items_matched, again.labels_created, again.labels_unchanged) == (0, 3, 0, 5)
    assert again.annotators_created == 0 and again.gold_labels == 0 and again.adjudications == 0
    tasks[0]["data"]["payload"] = {"text": "Edited in Label Studio"}
    edited = label_studio_import(project=target, content=json.dumps(tasks))
    assert edited.warnings == ["1 item(s) matched by id keep their stored content; the file's differs"]
    assert Item.objects.get(project=target, external_id=tasks[0]["data"]["external_id"]).payload != {
        "text": "Edited in Label Studio"
    }


def test_a_projects_own_labels_coming_back_change_nothing(labelled):
    """As after a trip through Label Studio, whose export names annotators by its own ids."""
    tasks = label_studio_tasks(labelled.project)
    label_studio_ids = {}
    for task in tasks:
        for annotation in task["annotations"]:
            if "completed_by" in annotation:
                email = annotation["completed_by"]["email"]
                annotation["completed_by"] = label_studio_ids.setdefault(email, 100 + len(label_studio_ids))
    labels_before, users_before = Label.objects.count(), User.objects.count()
    report = label_studio_import(project=labelled.project, content=json.dumps(tasks))
    assert (report.items_created, report.labels_created, report.annotators_created) == (0, 0, 0)
    assert report.labels_unchanged == 5 and (Label.objects.count(), User.objects.count()) == (
        labels_before,
        users_before,
    )
    region = next(r for t in tasks for a in t["annotations"] for r in a["result"] if r["from_name"] == "q1")
    was = region["value"]["choices"][0]
    region["value"]["choices"] = ["no" if was == "yes" else "yes"]
    refused = label_studio_import(project=labelled.project, content=json.dumps(tasks))
    assert (refused.tasks_refused, refused.items_matched, refused.labels_revised) == (1, 2, 0)
    assert f"'q1' was {was!r} in EduFair and is {region['value']['choices'][0]!r} here" in refused.refused[0]
    assert "accept_revisions" in refused.refused[0] and (Label.objects.count(), User.objects.count()) == (
        labels_before,
        users_before,
    )


def _refused(project, data, match):
    before = (Item.objects.count(), Label.objects.count(), User.objects.count(), GoldLabel.objects.count())
    with pytest.raises(LabelStudioImportFailed) as caught:
        label_studio_import(project=project, content=data if isinstance(data, str) else json.dumps(data))
    assert any(match in error for error in caught.value.errors), caught.value.errors
    assert (Item.objects.count(), Label.objects.count(), User.objects.count(), GoldLabel.objects.count()) == before


def _task(result, **annotation):
    return {"id": 9, "data": {"text": "An item"}, "annotations": [{"completed_by": 4, "result": result, **annotation}]}


def _choice(name, value, kind="choices"):
    return {"from_name": name, "to_name": "item", "type": kind, "value": {"choices": [value]}}


def test_what_cannot_be_mapped_is_refused_and_nothing_is_written(labelled, target):
    _refused(target, "{not json", "not valid JSON")
    _refused(target, {"tasks": []}, "JSON list of tasks")
    _refused(target, [{"id": 1, "text": "An item", "q1": "yes", "annotator": 3}], "flattened")
    _refused(target, [{"id": 1, "data": {"text": "An item"}}], "no task carries an annotation")
    _refused(target, [_task([_choice("q9", "yes")])], "no question with key 'q9'")
    _refused(target, [_task([_choice("q1", "maybe")])], "'maybe' is not a value of 'q1'")
    _refused(target, [_task([_choice("q1", "Unsure")])], "'Unsure' is not a value of 'q1'")  # not allowed here
    _refused(
        target, [_task([{"from_name": "ner", "to_name": "item", "type": "labels", "value": {}}])], "'labels' region"
    )
    _refused(target, [_task([_choice("q1", "yes")], completed_by=None)], "annotator is unknown")
    _refused(target, [{"id": 9, "data": {"image": "x.png"}, "annotations": []}], "no text, dialogue or payload")
    provenance = {"from_name": "provenance", "to_name": "item", "type": "textarea", "value": {"text": ["stage=7"]}}
    _refused(target, [_task([_choice("q1", "yes"), provenance])], "no stage 7")
    # A label that differs from the one already stored refuses its own task only: the rest comes in.
    tasks = label_studio_tasks(labelled.project)
    label_studio_import(project=target, content=json.dumps(tasks))
    changed = copy.deepcopy(tasks)
    region = next(r for t in changed for a in t["annotations"] for r in a["result"] if r["from_name"] == "q1")
    region["value"]["choices"] = ["no" if region["value"]["choices"] == ["yes"] else "yes"]
    changed.append({"id": 99, "data": {"text": "A new item", "external_id": "new"}, "annotations": []})
    labels = _labels(target)
    report = label_studio_import(project=target, content=json.dumps(changed))
    assert report.tasks_refused == 1 and "changed in Label Studio" in report.refused[0]
    assert Item.objects.filter(project=target, external_id="new").exists() and _labels(target) == labels


def test_text_no_database_stores_oversized_fields_and_odd_tag_names_are_refused_by_name(target):
    """Each would otherwise be a database error (a 500) or a TypeError; quoted values are cut short."""
    with_nul = _task([_choice("q1", "yes")])
    with_nul["data"]["text"] = "An item\x00"
    _refused(target, [with_nul], "contains a NUL character")
    for field, limit in (("external_id", 200), ("subject", 100), ("category", 200)):
        task = _task([_choice("q1", "yes")])
        task["data"][field] = "x" * (limit + 1)
        _refused(target, [task], f"too long: {field} ({limit + 1} characters, at most {limit})")
    _refused(target, [_task([{**_choice("q1", "yes"), "from_name": ["q1"]}])], "from_name must be the name of a tag")
    _refused(target, [_task([_choice("q1", "v" * 100_000)])], "(100002 characters) is not a value of 'q1'")
    with pytest.raises(LabelStudioImportFailed) as caught:
        label_studio_import(
            project=target, content=json.dumps([{**_task([_choice("q" * 50_000, "yes")]), "id": "9" * 50_000}])
        )
    assert len(str(caught.value)) < 600


def test_a_plain_label_studio_project_imports_with_warnings_for_what_is_left_out(target):
    tasks = [
        _task(
            [
                _choice("q1", "no"),
                {
                    "from_name": "q1_justification",
                    "to_name": "item",
                    "type": "textarea",
                    "value": {"text": ["off topic"]},
                },
            ],
            lead_time=12.5,
            ground_truth=True,
        ),
        {
            "id": 10,
            "data": {"dialogue": [{"author": "student", "text": "Hi"}, {"author": "tutor", "text": "Hello"}]},
            "annotations": [
                {"completed_by": {"email": "Someone@Example.org"}, "result": [_choice("q1", "yes")]},
                {"completed_by": 4, "was_cancelled": True, "result": []},
            ],
            "predictions": [{"result": []}],
        },
        {"id": 11, "data": {"text": "Nobody labelled me"}},
    ]
    report = label_studio_import(project=target, content=json.dumps(tasks))
    assert report.items_created == 3 and report.labels_created == 2 and report.annotators_created == 2
    assert report.gold_labels == 0  # a ground-truth star on an ordinary annotation does not make gold
    assert any("cancelled" in w for w in report.warnings) and any("prediction" in w for w in report.warnings)
    assert any("1 task(s) without" in w for w in report.warnings)
    dialogue = Item.objects.get(project=target, external_id="label-studio-10")
    assert dialogue.payload == {"turns": [{"role": "student", "text": "Hi"}, {"role": "tutor", "text": "Hello"}]}
    label = Label.objects.get(assignment__item__external_id="label-studio-9")
    assert (label.value, label.justification, label.seconds, label.phase, label.round) == (
        "no",
        "off topic",
        12.5,
        "main",
        "pre",
    )
    assert label.assignment.annotator.username == annotator_username("label-studio-user:4")
    email_user = Label.objects.get(assignment__item=dialogue).assignment.annotator
    assert email_user.username == annotator_username("someone@example.org") and "example" not in email_user.username


def test_page_and_api_are_for_researchers_and_answer_400_with_the_errors(
    target, researcher_client, client, annotator, settings
):
    page = reverse("annotation:label-studio-import", args=[target.pk])
    api = reverse("annotation-label-studio-import", args=[target.pk])
    assert researcher_client.get(page).status_code == 200
    bad = json.dumps([{"id": 1, "text": "x", "q1": "yes"}])
    response = researcher_client.post(page, {"file": SimpleUploadedFile("ls.json", bad.encode())})
    assert response.status_code == 400 and "flattened" in response.content.decode()
    good = json.dumps([_task([_choice("q1", "yes")])])
    response = researcher_client.post(page, {"file": SimpleUploadedFile("ls.json", good.encode())})
    assert response.status_code == 302 and Label.objects.filter(assignment__item__project=target).count() == 1
    response = researcher_client.post(api, {"content": bad}, content_type="application/json")
    assert response.status_code == 400 and any("flattened" in e for e in response.json()["errors"])
    assert researcher_client.post(api, {}, content_type="application/json").status_code == 400
    response = researcher_client.post(api, {"content": good, "stage": 1}, content_type="application/json")
    assert response.status_code == 201 and response.json()["labels_unchanged"] == 1
    assert (
        researcher_client.post(api, {"content": good, "stage": 5}, content_type="application/json").status_code == 400
    )
    settings.UPLOAD_MAX_BYTES = {**settings.UPLOAD_MAX_BYTES, "items": 10}
    response = researcher_client.post(page, {"file": SimpleUploadedFile("ls.json", good.encode())})
    assert response.status_code == 400 and "largest item file" in response.content.decode()
    response = researcher_client.post(api, {"content": good}, content_type="application/json")
    assert response.status_code == 400 and "largest item file" in json.dumps(response.json())
    client.force_login(annotator)
    assert client.get(page).status_code == 403
    assert client.post(api, {"content": good}, content_type="application/json").status_code == 403
