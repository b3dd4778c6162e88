"""What Label Studio does to an export before it comes back, and what the import makes of it: the anonymous export
comes back apart by its provenance's pseudonyms (an older one, all given to one user, is refused once, naming the
export to make); an edited task text, a changed gold answer and a changed label refuse their own task in words, the
rest imported (a changed label kept as a revision with accept_revisions, on page, API and command); annotators by
e-mail, else by (instance, number); drafts and empty annotations counted; CSV, TSV and JSON-MIN refused once."""

import copy
import io
import json
import re

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.label_studio.export import label_studio_tasks
from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.label_studio.pseudonyms import anonymous_annotator, deployment_annotator_email
from annotation.label_studio.reading import annotator_username, user_number_identity
from annotation.models import Item, Label, LabelRevision
from annotation.services.projects import project_create, question_create, stage_create

from .label_studio_setup import labelled_project
from .main_setup import YES_NO

pytestmark = pytest.mark.django_db
IMPORTER = 1  # the Label Studio user who imports a file: every annotation without completed_by becomes theirs


@pytest.fixture
def labelled(make_user):
    return labelled_project(make_user)


def _target(name="Imported"):
    project = project_create(name=name)
    question = question_create(project=project, key="q1", prompt="Question q1?", choices=YES_NO)
    stage_create(project=project, name="Stage 1", questions=[question], overlap=2)
    return project


def _through_label_studio(tasks):
    """As Label Studio exports them after an import: annotators by its own user number (the importer's when the
    file named none)."""
    tasks = copy.deepcopy(tasks)
    numbers = {}
    for task in tasks:
        for annotation in task["annotations"]:
            email = annotation.pop("completed_by", {}).get("email")
            annotation["completed_by"] = numbers.setdefault(email, 10 + len(numbers)) if email else IMPORTER
    return tasks


def _per_annotator(project) -> set[tuple]:
    """Each annotator's labels, the annotator named by the set of (item, round) they labelled: comparable across
    projects whatever their user names."""
    rows = Label.objects.filter(assignment__item__project=project).values_list(
        "assignment__annotator_id", "assignment__item__external_id", "round", "value", "justification"
    )
    by_annotator: dict[int, set] = {}
    for annotator, *fact in rows:
        by_annotator.setdefault(annotator, set()).add(tuple(fact))
    return {frozenset(facts) for facts in by_annotator.values()}


def _regions(task, name):
    return [r for a in task["annotations"] for r in a["result"] if r["from_name"] == name]


def test_the_anonymous_export_comes_back_apart_by_its_pseudonyms(labelled):
    tasks = _through_label_studio(label_studio_tasks(labelled.project, attribution=False))
    assert {a["completed_by"] for t in tasks for a in t["annotations"]} == {IMPORTER}
    pseudonyms = {anonymous_annotator(labelled.project.pk, user.pk) for user in labelled.users}
    provenances = [r["value"]["text"][0] for t in tasks for r in _regions(t, "provenance")]
    assert {re.search(r"annotator=([\w-]+)", p).group(1) for p in provenances if "kind=label" in p} == pseudonyms
    assert all(re.fullmatch(r"anon-[0-9a-f]{12}", pseudonym) for pseudonym in pseudonyms)  # a hash, not the id
    emails = {deployment_annotator_email(user.pk) for user in labelled.users}
    assert not any(pseudonym[5:] in email for pseudonym in pseudonyms for email in emails)
    target = _target()
    report = label_studio_import(project=target, content=json.dumps(tasks))
    assert (report.annotators_created, report.labels_created, report.tasks_refused) == (2, 5, 0)
    assert _per_annotator(target) == _per_annotator(labelled.project)
    assert not any("user number" in warning for warning in report.warnings), report.warnings
    for _ in range(2):
        again = label_studio_import(project=target, content=json.dumps(tasks))
        assert (again.labels_created, again.labels_unchanged, again.annotators_created) == (0, 5, 0)
    own = label_studio_import(project=labelled.project, content=json.dumps(tasks))
    assert (own.labels_created, own.labels_unchanged, own.annotators_created) == (0, 5, 0)
    # Another project's anonymous export names the same people by other pseudonyms.
    assert anonymous_annotator(labelled.project.pk + 1, labelled.users[0].pk) not in pseudonyms


def test_an_anonymous_export_without_pseudonyms_is_refused_once_naming_the_export_to_make(labelled):
    tasks = _through_label_studio(label_studio_tasks(labelled.project, attribution=False))
    for region in (r for t in tasks for r in _regions(t, "provenance")):
        region["value"]["text"] = [re.sub(r"annotator=[\w-]+; ", "", region["value"]["text"][0])]
    target = _target()
    with pytest.raises(LabelStudioImportFailed) as caught:
        label_studio_import(project=target, content=json.dumps(tasks))
    assert len(caught.value.errors) == 1, caught.value.errors
    error = caught.value.errors[0]
    assert "every label annotation is by one Label Studio user (1)" in error and "anonymised annotators" in error
    assert "labelstudio-anonymous" in error and "labelstudio (pseudonymous e-mails" in error
    assert not Item.objects.filter(project=target).exists()


def test_an_edited_task_text_refuses_that_task_and_the_rest_comes_in(labelled):
    tasks = _through_label_studio(label_studio_tasks(labelled.project))
    target = _target()
    edited = next(t for t in tasks if t["data"]["external_id"] == "item-0")
    assert edited["data"]["dialogue"][0] == {"author": "item", "text": "Main item 0"}
    edited["data"]["dialogue"][0]["text"] = "Main item 0 (edited)"
    report = label_studio_import(project=target, content=json.dumps(tasks))
    assert report.tasks_refused == 1 and report.items_created == len(tasks) - 1
    number = tasks.index(edited) + 1
    assert report.refused[0] == (
        f"task {number} (id {edited['id']}): its text was edited in Label Studio (data.dialogue[0].text: "
        "'Main item 0' became 'Main item 0 (edited)'); EduFair keeps the text its annotators saw, so the task is not "
        f"imported ({len(edited['annotations'])} annotation(s) left out): undo the edit in Label Studio and export "
        "again, or add the edited text to EduFair as a new item"
    )
    assert report.warnings[0] == "1 task(s) refused and left out; the rest imported"
    assert not Item.objects.filter(project=target, external_id="item-0").exists()
    # A matched item is held to its stored text: a turn edited in Label Studio refuses its task.
    dialogue_task = next(t for t in tasks if len(t["data"]["dialogue"]) == 2)
    dialogue_task["data"]["dialogue"][-1]["text"] = "Because I said so."
    again = label_studio_import(project=target, content=json.dumps([dialogue_task]))
    assert again.tasks_refused == 1 and again.labels_unchanged == 0
    assert "data.dialogue[1].text: 'Because.' became 'Because I said so.'" in again.refused[0]
    # A text task: its shown text against the payload EduFair exported beside it.
    choice = {"from_name": "q1", "to_name": "item", "type": "choices", "value": {"choices": ["yes"]}}
    text = "Student: is 0.5 the same as 1/2? Tutor: yes, both are one half, whatever the notation."
    task = {
        "id": 50,
        "data": {"text": text.replace("one half", "a third"), "payload": {"text": text}, "external_id": "t"},
        "annotations": [{"completed_by": 2, "result": [choice]}],
    }
    report = label_studio_import(project=target, content=json.dumps([task]))
    assert report.tasks_refused == 1 and (
        "data.text: '…are one half, whatever the notation.' became '…are a third, whatever the "
        "notation.'" in report.refused[0]
    ), report.refused
    task["data"]["text"] = text
    assert label_studio_import(project=target, content=json.dumps([task])).labels_created == 1
    # A plain Label Studio task (no payload of EduFair's) is held to the item it made.
    plain = {"id": 60, "data": {"text": "Plain"}, "annotations": [{"completed_by": 2, "result": [choice]}]}
    label_studio_import(project=target, content=json.dumps([plain]))
    plain["data"]["text"] = "Plain, edited"
    report = label_studio_import(project=target, content=json.dumps([plain]))
    assert report.tasks_refused == 1 and "(data.text: 'Plain' became 'Plain, edited')" in report.refused[0]
    # The item changed in EduFair since the export is no edit in Label Studio: its stored text stays, with a warning.
    dialogue_task["data"]["dialogue"][-1]["text"] = "Because."
    stored = Item.objects.filter(project=target, external_id=dialogue_task["data"]["external_id"])
    stored.update(payload={"text": "Fixed in EduFair"})
    fixed = label_studio_import(project=target, content=json.dumps([dialogue_task]))
    assert fixed.tasks_refused == 0 and fixed.labels_unchanged > 0
    assert "1 item(s) matched by id keep their stored content; the file's differs" in fixed.warnings
    assert stored.get().payload == {"text": "Fixed in EduFair"}


def test_a_changed_label_is_refused_per_task_or_kept_as_a_revision(labelled, researcher_client):
    tasks = _through_label_studio(label_studio_tasks(labelled.project))
    disputed = next(t for t in tasks if t["data"]["external_id"] == labelled.disputed.external_id)
    region = next(
        r
        for a in disputed["annotations"]
        if "kind=label" in a["result"][0]["value"]["text"][0]
        for r in a["result"]
        if r["from_name"] == "q1"
    )
    before = region["value"]["choices"][0]
    after = "no" if before == "yes" else "yes"
    region["value"]["choices"] = [after]
    stored = {label.pk: label.value for label in Label.objects.filter(assignment__item__project=labelled.project)}
    refused = label_studio_import(project=labelled.project, content=json.dumps(tasks))
    assert refused.tasks_refused == 1 and refused.labels_revised == 0
    assert f"'q1' was {before!r} in EduFair and is {after!r} here" in refused.refused[0]
    assert {label.pk: label.value for label in Label.objects.filter(assignment__item__project=labelled.project)} == (
        stored
    )
    # Accepted through the API: the changed label takes the new answer, its first answer kept as revision 1.
    api = reverse("annotation-label-studio-import", args=[labelled.project.pk])
    response = researcher_client.post(
        api, {"content": json.dumps(tasks), "accept_revisions": True}, content_type="application/json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["labels_revised"], body["tasks_refused"], body["refused"], body["labels_created"]) == (1, 0, [], 0)
    revision = LabelRevision.objects.get()
    assert (revision.version, revision.value, revision.label.value) == (1, before, after)
    assert revision.given_at == revision.label.created_at
    # The same file again changes nothing; a second change is version 2.
    again = label_studio_import(project=labelled.project, content=json.dumps(tasks), accept_revisions=True)
    assert (again.labels_revised, again.labels_created, LabelRevision.objects.count()) == (0, 0, 1)
    region["value"]["choices"] = [before]
    label_studio_import(project=labelled.project, content=json.dumps(tasks), accept_revisions=True)
    assert list(LabelRevision.objects.values_list("version", "value")) == [(1, before), (2, after)]


def test_a_changed_gold_answer_refuses_its_task_even_with_revisions_accepted(labelled):
    tasks = label_studio_tasks(labelled.project)
    gold_task = next(t for t in tasks if t["data"]["external_id"] == "gold-0")
    _regions(gold_task, "q1")[0]["value"]["choices"] = ["no"]
    report = label_studio_import(project=labelled.project, content=json.dumps(tasks), accept_revisions=True)
    assert (
        report.tasks_refused == 1 and "the gold answer to 'q1' is 'yes' in EduFair and 'no' here" in (report.refused[0])
    )
    assert labelled.training.gold_labels.get().value == "yes"


def test_drafts_and_empty_annotations_are_counted_in_the_warnings():
    target = _target()
    choice = {"from_name": "q1", "to_name": "item", "type": "choices", "value": {"choices": ["yes"]}}
    tasks = [
        {
            "id": 1,
            "data": {"text": "One"},
            "annotations": [{"completed_by": 2, "result": [choice]}, {"completed_by": 3, "result": []}],
            "drafts": [7, 8],
        },
        {"id": 2, "data": {"text": "Two"}, "annotations": [{"completed_by": 4, "result": []}], "drafts": [9]},
    ]
    report = label_studio_import(project=target, content=json.dumps(tasks))
    assert report.labels_created == 1
    assert any(w.startswith("3 draft(s) left out: a draft is not a submitted annotation") for w in report.warnings)
    assert "2 annotation(s) without an answer (an empty result) left out" in report.warnings
    assert "1 task(s) without an answered annotation: imported as items only" in report.warnings


def test_annotators_by_e_mail_else_by_instance_and_number():
    target = _target()
    choice = {"from_name": "q1", "to_name": "item", "type": "choices", "value": {"choices": ["yes"]}}

    def tasks(completed_by, number=1):
        return [
            {
                "id": number,
                "data": {"text": f"Item {number}"},
                "annotations": [{"completed_by": completed_by, "result": [choice]}],
            }
        ]

    # Label Studio's export with users expanded names them by e-mail: the number is not used.
    report = label_studio_import(
        project=target, content=json.dumps(tasks({"id": 3, "email": "Rater@Example.org", "first_name": ""}))
    )
    assert User.objects.filter(username=annotator_username("rater@example.org")).exists()
    assert not any("user number" in w for w in report.warnings)
    # Numbers only: taken in the unnamed instance, said so; user 3 of two named instances are two people.
    report = label_studio_import(project=target, content=json.dumps(tasks(3, 2)))
    assert any("named by Label Studio user number only (3)" in w for w in report.warnings)
    label_studio_import(project=target, content=json.dumps(tasks(3, 3)), instance="https://ls-a.example.org")
    label_studio_import(project=target, content=json.dumps(tasks(3, 4)), instance="https://ls-b.example.org")
    names = {
        annotator_username(user_number_identity(3)),
        annotator_username(user_number_identity(3, "https://ls-a.example.org")),
        annotator_username(user_number_identity(3, "https://ls-b.example.org")),
    }
    assert len(names) == 3 and User.objects.filter(username__in=names).count() == 3
    assert annotator_username(user_number_identity(3)) == annotator_username("label-studio-user:3")  # as before


def test_csv_tsv_and_json_min_exports_are_refused_once_saying_what_they_are():
    target = _target()
    csv = "annotation_id,annotator,created_at,id,lead_time,q1,text,updated_at\n1,1,2026,5,3.2,yes,An item,2026\n"
    tsv = csv.replace(",", "\t")
    json_min = json.dumps(
        [
            {"id": n, "text": "An item", "q1": "yes", "annotator": 1, "annotation_id": n, "lead_time": 2}
            for n in range(30)
        ]
    )
    for content, what in ((csv, "a CSV file"), (tsv.encode(), "a TSV file"), (json_min, "JSON-MIN export")):
        with pytest.raises(LabelStudioImportFailed) as caught:
            label_studio_import(project=target, content=content)
        assert len(caught.value.errors) == 1, caught.value.errors
        assert what in caught.value.errors[0] and "not valid JSON" not in caught.value.errors[0]
        assert "Export as JSON (not JSON-MIN/CSV) from Label Studio's Export dialog" in caught.value.errors[0]
    assert not Item.objects.filter(project=target).exists()


def test_the_page_and_the_command_take_accept_revisions_and_list_refusals(labelled, researcher_client, tmp_path):
    tasks = label_studio_tasks(labelled.project)
    region = next(r for t in tasks for r in _regions(t, "q1"))
    region["value"]["choices"] = ["no" if region["value"]["choices"] == ["yes"] else "yes"]
    path = tmp_path / "label-studio.json"
    path.write_text(json.dumps(tasks))
    page = reverse("annotation:label-studio-import", args=[labelled.project.pk])
    response = researcher_client.post(page, {"file": SimpleUploadedFile("ls.json", path.read_bytes())}, follow=True)
    text = response.content.decode()
    assert "1 task(s) refused" in text and "changed in Label Studio" in text and not LabelRevision.objects.exists()
    with pytest.raises(CommandError, match="no annotation project 999"):
        call_command("label_studio_import", "999", str(path))
    out = io.StringIO()
    call_command("label_studio_import", str(labelled.project.pk), str(path), stdout=out)
    assert "Refused: task 1 (id" in out.getvalue() and not LabelRevision.objects.exists()
    call_command("label_studio_import", str(labelled.project.pk), str(path), "--accept-revisions", stdout=out)
    assert "1 revised" in out.getvalue() and LabelRevision.objects.count() == 1
    path.write_text("id,text\n1,An item\n")
    with pytest.raises(CommandError, match="(?s)Nothing was imported from .*a CSV file"):
        call_command("label_studio_import", str(labelled.project.pk), str(path))
    response = researcher_client.post(
        page, {"file": SimpleUploadedFile("ls.json", path.read_bytes()), "accept_revisions": "on"}
    )
    assert response.status_code == 400 and "a CSV file" in response.content.decode()
