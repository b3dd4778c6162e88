"""A round trip through a real Label Studio CE (1.23, installed by .ci/run in its own virtualenv and named by
EDUFAIR_LABEL_STUDIO): the demo project's export and its shipped label config go into a new Label Studio
project over its REST API with no edits, every annotation read back matches EduFair's labels per item,
annotator, stage, phase, round and question (gold and adjudicated finals too); then Label Studio's own
JSON export goes into a fresh EduFair project through the import API and matches again, and into the demo
project itself, where it adds nothing. The anonymous export, all of whose annotations Label Studio gives to the
importing user, comes back apart by the pseudonyms in its provenance (without them, it is refused once, saying
why); a task text edited, an annotation changed, a draft and an empty annotation made in Label Studio come back
each with its stated outcome (refused task, refusal or revision, counted warnings).

Label Studio starts once per session (`label_studio_service`; the start-up time is printed). Without the
executable the test skips (fails in CI)."""

from __future__ import annotations

import copy
import io
import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.demo import DEMO_PROJECT_NAME, safetutors_demo_seed
from annotation.label_studio.importing import LabelStudioImportFailed, label_studio_import
from annotation.label_studio.provenance import provenance_parse
from annotation.label_studio.pseudonyms import deployment_annotator_email
from annotation.label_studio.reading import annotator_username
from annotation.models import Adjudication, AnnotationProject, GoldLabel, Item, Label, LabelRevision, Thread
from annotation.presets import SAFETUTORS, SAFETUTORS_RISK_CATEGORIES, SAFETUTORS_SUBJECTS
from annotation.services.adjudication import discussion_answers_submit, discussion_close
from annotation.services.projects import project_create, question_create, stage_create
from annotation.workflow.answers import Answer
from conftest import service_missing

from . import label_studio_service
from .label_studio_setup import labelled_project
from .main_setup import YES_NO

# One xdist group: the tests run in the process that starts the one Label Studio.
pytestmark = [pytest.mark.django_db, pytest.mark.slow, pytest.mark.services, pytest.mark.xdist_group("label-studio")]


@pytest.fixture(scope="session")
def label_studio(request):
    service = label_studio_service.start(request.config)
    if service is None:
        service_missing(f"Label Studio CE is not installed (set {label_studio_service.EXECUTABLE_VARIABLE})")
    ready_after = service.wait_ready()
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"Label Studio answered /health {ready_after:.1f} s after it was started")
    return service


def _demo_project() -> AnnotationProject:
    """The demo, with what it lacks for a full trip: a text item among the dialogues, an answer changed
    after discussion and the discussion's settled final."""
    safetutors_demo_seed(io.StringIO())
    project = AnnotationProject.objects.get(name=DEMO_PROJECT_NAME)
    text_item = Item.objects.create(
        project=project,
        external_id="text-000",
        payload={"text": "Student: is 0.5 the same as 1/2? Tutor: Yes — both are one half."},
        subject=SAFETUTORS_SUBJECTS[0],
        category=SAFETUTORS_RISK_CATEGORIES[0],
    )
    question = project.questions.order_by("position").first()
    GoldLabel.objects.create(item=text_item, question=question, value=question.choices[0]["value"])
    thread = Thread.objects.get(stage__project=project, kind=Thread.Kind.ADJUDICATION)
    stage, item = thread.stage, thread.item
    second = Label.objects.filter(assignment__stage=stage, assignment__item=item).order_by("-assignment_id").first()
    first_value = (
        Label.objects.filter(assignment__stage=stage, assignment__item=item).order_by("assignment_id")[0].value
    )
    discussion_answers_submit(
        stage=stage,
        item=item,
        annotator=second.assignment.annotator,
        answers={second.question.key: Answer(value=first_value, justification="Read again after the discussion.")},
    )
    discussion_close(stage=stage, item=item)
    return project


def _edufair_facts(project, annotator_name) -> set[tuple]:
    """Every label, gold label and adjudicated final of the project, as comparable tuples."""
    facts = set()
    labels = Label.objects.filter(assignment__item__project=project, assignment__submitted_at__isnull=False)
    for label in labels.select_related("assignment__item", "assignment__stage", "question"):
        facts.add(
            (
                "label",
                label.assignment.item.external_id,
                annotator_name(label.assignment.annotator),
                str(label.assignment.stage.order),
                label.phase,
                label.round,
                label.question.key,
                "Unsure" if label.unsure else label.value,
                label.justification,
            )
        )
    for gold in GoldLabel.objects.filter(item__project=project).select_related("item", "question"):
        facts.add(("gold", gold.item.external_id, None, "", "", "", gold.question.key, gold.value, ""))
    for final in (
        Adjudication.objects.filter(stage__project=project)
        .exclude(final_value="")
        .select_related("item", "stage", "question")
    ):
        facts.add(
            (
                "adjudication",
                final.item.external_id,
                None,
                str(final.stage.order),
                final.method,
                "",
                final.question.key,
                final.final_value,
                "",
            )
        )
    return facts


def _label_studio_facts(tasks: list[dict], email_of_id: dict[int, str]) -> set[tuple]:
    facts = set()
    for task in tasks:
        for annotation in task["annotations"]:
            regions = {r["from_name"]: r["value"] for r in annotation["result"]}
            provenance = provenance_parse(regions.pop("provenance")["text"][0])
            kind = provenance["kind"]
            for key, value in regions.items():
                if key.endswith("_justification"):
                    continue
                justification = regions.get(f"{key}_justification", {}).get("text", [""])[0]
                if kind == "label":
                    facts.add(
                        (
                            kind,
                            task["data"]["external_id"],
                            email_of_id[annotation["completed_by"]],
                            provenance["stage"],
                            provenance["phase"],
                            provenance["round"],
                            key,
                            value["choices"][0],
                            justification,
                        )
                    )
                elif kind == "gold":
                    facts.add((kind, task["data"]["external_id"], None, "", "", "", key, value["choices"][0], ""))
                else:
                    facts.add(
                        (
                            kind,
                            task["data"]["external_id"],
                            None,
                            provenance["stage"],
                            provenance["method"],
                            "",
                            key,
                            value["choices"][0],
                            "",
                        )
                    )
    return facts


def _per_annotator(project) -> set[frozenset]:
    """Each annotator's labels as the set of (item, round, question, value) they gave: comparable across projects
    whatever the annotators are called."""
    by_annotator: dict[int, set] = {}
    for annotator, *fact in Label.objects.filter(assignment__item__project=project).values_list(
        "assignment__annotator_id", "assignment__item__external_id", "round", "question__key", "value"
    ):
        by_annotator.setdefault(annotator, set()).add(tuple(fact))
    return {frozenset(facts) for facts in by_annotator.values()}


def _label_studio_project(label_studio, researcher_client, project, fmt: str) -> tuple[int, list[dict]]:
    """A Label Studio project made from the EduFair project's export in `fmt`; its id and the tasks sent."""
    body = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, fmt])).content
    config = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, "labelstudio-config"]))
    created = label_studio.call(
        "POST", "/api/projects", {"title": project.name, "label_config": config.content.decode()}
    )
    label_studio.call("POST", f"/api/projects/{created['id']}/import", body)
    return created["id"], json.loads(body)


def _exported(label_studio, project_id: int) -> list[dict]:
    return label_studio.call("GET", f"/api/projects/{project_id}/export?exportType=JSON&download_all_tasks=true")


def test_a_text_project_without_attribution_goes_in_as_it_is(label_studio, researcher_client, make_user):
    """The other layout and the other option: text items only, annotations without completed_by (Label
    Studio gives them to the importing user), values kept; back in EduFair, apart by their pseudonyms."""
    project = labelled_project(make_user, dialogue=False).project
    body = researcher_client.get(
        reverse("annotation:labels-export", args=[project.pk, "labelstudio-anonymous"])
    ).content
    config = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, "labelstudio-config"]))
    assert b"<Text " in config.content and b"completed_by" not in body
    created = label_studio.call(
        "POST", "/api/projects", {"title": project.name, "label_config": config.content.decode()}
    )
    imported = label_studio.call("POST", f"/api/projects/{created['id']}/import", body)
    tasks = json.loads(body)
    assert imported["annotation_count"] == sum(len(t["annotations"]) for t in tasks) == 8
    exported = label_studio.call("GET", f"/api/projects/{created['id']}/export?exportType=JSON&download_all_tasks=true")
    importer = next(
        u["id"] for u in label_studio.call("GET", "/api/users/") if u["email"] == label_studio_service.ADMIN
    )
    assert {a["completed_by"] for t in exported for a in t["annotations"]} == {importer}
    sent = sorted(
        (t["data"]["external_id"], json.dumps(a["result"], sort_keys=True)) for t in tasks for a in t["annotations"]
    )
    got = sorted(
        (t["data"]["external_id"], json.dumps(a["result"], sort_keys=True)) for t in exported for a in t["annotations"]
    )
    assert got == sent

    # Back into a fresh EduFair project: two annotators again, each with their own labels, and seven imports later
    # not one label more; into the project itself: nothing added.
    target = project_create(name="Anonymous back")
    question_create(project=target, key="q1", prompt="Question q1?", choices=YES_NO)
    stage_create(project=target, name="Stage 1", questions=list(target.questions.all()), overlap=2)
    api = reverse("annotation-label-studio-import", args=[target.pk])
    for number in range(7):
        response = researcher_client.post(api, {"content": json.dumps(exported)}, content_type="application/json")
        assert response.status_code == 201, response.content
        counts = response.json()
        assert (counts["labels_created"], counts["annotators_created"]) == ((5, 2) if number == 0 else (0, 0))
        assert counts["tasks_refused"] == 0 and counts["labels_unchanged"] == (0 if number == 0 else 5)
    assert _per_annotator(target) == _per_annotator(project)
    own = label_studio_import(project=project, content=json.dumps(exported))
    assert (own.labels_created, own.labels_unchanged, own.annotators_created) == (0, 5, 0)
    # The same export without the pseudonyms (as EduFair wrote it before): refused once, saying why.
    for region in (r for t in exported for a in t["annotations"] for r in a["result"]):
        if region["from_name"] == "provenance":
            region["value"]["text"] = [re.sub(r"annotator=[\w-]+; ", "", region["value"]["text"][0])]
    with pytest.raises(LabelStudioImportFailed) as caught:
        label_studio_import(project=target, content=json.dumps(exported))
    assert len(caught.value.errors) == 1 and "anonymised annotators" in caught.value.errors[0]
    assert f"one Label Studio user ({importer})" in caught.value.errors[0]


def test_what_is_changed_in_label_studio_comes_back_in_words(label_studio, researcher_client, make_user):
    """An edited task text refuses its task, a changed annotation refuses its task or, accepted, is kept as a
    revision; a draft and an empty annotation are counted; every other task comes back unchanged."""
    s = labelled_project(make_user, name="Changed in Label Studio", dialogue=False)
    project_id, _ = _label_studio_project(label_studio, researcher_client, s.project, "labelstudio-anonymous")
    tasks = {t["data"]["external_id"]: t for t in _exported(label_studio, project_id)}
    undisputed = next(item for item in s.items if item != s.disputed)
    edited, changed, gold = tasks[undisputed.external_id], tasks[s.disputed.external_id], tasks["gold-0"]
    assert edited is not changed
    text = edited["data"]["text"]
    label_studio.call("PATCH", f"/api/tasks/{edited['id']}/", {"data": {**edited["data"], "text": text + "!"}})
    annotation = next(a for a in changed["annotations"] if "round=pre" in a["result"][0]["value"]["text"][0])
    result = copy.deepcopy(annotation["result"])
    choice = next(r for r in result if r["from_name"] == "q1")
    before = choice["value"]["choices"][0]
    after = "no" if before == "yes" else "yes"
    choice["value"]["choices"] = [after]
    label_studio.call("PATCH", f"/api/annotations/{annotation['id']}/", {"result": result})
    label_studio.call("POST", f"/api/tasks/{gold['id']}/drafts", {"result": [choice], "lead_time": 2})
    label_studio.call("POST", f"/api/tasks/{gold['id']}/annotations/", {"result": [], "lead_time": 1})
    exported = _exported(label_studio, project_id)
    content = json.dumps(exported)
    labels = _per_annotator(s.project)

    report = label_studio_import(project=s.project, content=content)
    assert report.tasks_refused == 2 and report.labels_revised == 0 and _per_annotator(s.project) == labels
    where = {t["data"]["external_id"]: f"task {n} (id {t['id']})" for n, t in enumerate(exported, start=1)}
    edit_refusal = next(r for r in report.refused if r.startswith(where[edited["data"]["external_id"]]))
    assert "its text was edited in Label Studio (data.text: " in edit_refusal and "!'" in edit_refusal
    change_refusal = next(r for r in report.refused if r.startswith(where[changed["data"]["external_id"]]))
    assert f"'q1' was {before!r} in EduFair and is {after!r} here" in change_refusal
    assert "accept_revisions" in change_refusal
    assert any(w.startswith("1 draft(s) left out") for w in report.warnings), report.warnings
    assert "1 annotation(s) without an answer (an empty result) left out" in report.warnings

    accepted = label_studio_import(project=s.project, content=content, accept_revisions=True)
    assert (accepted.tasks_refused, accepted.labels_revised, accepted.labels_created) == (1, 1, 0)
    assert "its text was edited" in accepted.refused[0]
    revision = LabelRevision.objects.get(label__assignment__item=s.disputed)
    assert (revision.version, revision.value, revision.label.value) == (1, before, after)
    again = label_studio_import(project=s.project, content=content, accept_revisions=True)
    assert (again.labels_revised, again.labels_created, LabelRevision.objects.count()) == (0, 0, 1)


def test_demo_project_goes_to_label_studio_and_back(label_studio, researcher_client):
    project = _demo_project()
    body = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, "labelstudio"])).content
    config = researcher_client.get(reverse("annotation:labels-export", args=[project.pk, "labelstudio-config"]))
    tasks = json.loads(body)
    expected = _edufair_facts(project, lambda user: deployment_annotator_email(user.pk))
    assert len(expected) == (
        Label.objects.filter(assignment__item__project=project).count()
        + GoldLabel.objects.filter(item__project=project).count()
        + Adjudication.objects.filter(stage__project=project).count()
    )
    assert {fact[0] for fact in expected} == {"label", "gold", "adjudication"}
    assert {fact[5] for fact in expected if fact[0] == "label"} == {"pre", "post"}
    assert {fact[4] for fact in expected if fact[0] == "label"} >= {"pilot", "qualification", "main"}

    # Into Label Studio: its annotators by their pseudonymous e-mails, the shipped config, the file as it is.
    emails = sorted({a["completed_by"]["email"] for t in tasks for a in t["annotations"] if "completed_by" in a})
    for email in emails:
        label_studio.call("POST", "/api/users/", {"email": email, "username": email.split("@")[0]})
    created = label_studio.call(
        "POST", "/api/projects", {"title": project.name, "label_config": config.content.decode()}
    )
    imported = label_studio.call("POST", f"/api/projects/{created['id']}/import", body)
    assert imported["task_count"] == len(tasks)
    assert imported["annotation_count"] == sum(len(t["annotations"]) for t in tasks)

    exported = label_studio.call("GET", f"/api/projects/{created['id']}/export?exportType=JSON&download_all_tasks=true")
    users = label_studio.call("GET", "/api/users/")
    email_of_id = {user["id"]: user["email"] for user in users}
    assert len(exported) == len(tasks)
    assert _label_studio_facts(exported, email_of_id) == expected
    truth = {
        (provenance_parse(a["result"][0]["value"]["text"][0])["kind"], a["ground_truth"])
        for t in exported
        for a in t["annotations"]
    }
    assert truth == {("label", False), ("gold", True), ("adjudication", True)}

    # Back into a fresh EduFair project with the same questions, through the import API.
    target = project_create(name="Back from Label Studio", preset=SAFETUTORS)
    upload = SimpleUploadedFile("label-studio.json", json.dumps(exported).encode(), content_type="application/json")
    response = researcher_client.post(reverse("annotation-label-studio-import", args=[target.pk]), {"file": upload})
    assert response.status_code == 201, response.content
    id_of_email = {email: user_id for user_id, email in email_of_id.items()}
    username_of_email = {email: annotator_username(f"label-studio-user:{id_of_email[email]}") for email in emails}
    expected_back = {
        (fact[0], fact[1], username_of_email[fact[2]], *fact[3:]) if fact[0] == "label" else fact for fact in expected
    }
    assert _edufair_facts(target, lambda user: user.username) == expected_back
    # And back into the demo project itself: its own labels are recognised, nothing is added.
    upload = SimpleUploadedFile("label-studio.json", json.dumps(exported).encode(), content_type="application/json")
    response = researcher_client.post(reverse("annotation-label-studio-import", args=[project.pk]), {"file": upload})
    assert response.status_code == 201, response.content
    counts = response.json()
    assert counts["labels_created"] == counts["annotators_created"] == counts["items_created"] == 0
    assert counts["labels_unchanged"] == sum(1 for fact in expected if fact[0] == "label")
    assert _edufair_facts(project, lambda user: deployment_annotator_email(user.pk)) == expected
    payloads = dict(Item.objects.filter(project=project).values_list("external_id", "payload"))
    assert dict(Item.objects.filter(project=target).values_list("external_id", "payload")) == payloads
