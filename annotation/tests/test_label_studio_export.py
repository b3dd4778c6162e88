"""The Label Studio export: every task in one layout the shipped config reads, completed_by as a salted
pseudonymous e-mail (the same person alike across projects) or left out, before/after-discussion labels
told apart by their provenance, adjudicated finals and gold as ground-truth annotations."""

import json
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from annotation.label_studio.export import label_studio_tasks, project_label_config
from annotation.label_studio.provenance import provenance_parse
from annotation.selectors import exports

from .label_studio_setup import JUSTIFICATION, labelled_project

pytestmark = pytest.mark.django_db


def _provenance(annotation) -> dict:
    region = next(r for r in annotation["result"] if r["from_name"] == "provenance")
    return provenance_parse(region["value"]["text"][0])


@pytest.fixture
def labelled(make_user):
    return labelled_project(make_user)


def test_tasks_share_one_layout_the_config_reads(labelled):
    tasks = label_studio_tasks(labelled.project)
    assert len(tasks) == 3  # both main items and the gold training item, labelled or not
    assert all(isinstance(t["data"]["dialogue"], list) and "text" not in t["data"] for t in tasks)
    view = ET.fromstring(project_label_config(labelled.project))
    assert view.find("Paragraphs").get("value") == "$dialogue"
    names = {c.get("name") for c in view.iter("Choices")} | {t.get("name") for t in view.iter("TextArea")}
    for task in tasks:
        assert task["data"]["payload"] and task["data"]["external_id"]
        for annotation in task["annotations"]:
            assert {r["from_name"] for r in annotation["result"]} <= names
            assert {r["to_name"] for r in annotation["result"]} == {"item"}


def test_phases_rounds_finals_and_gold_are_told_apart(labelled):
    by_item = {t["data"]["external_id"]: t for t in label_studio_tasks(labelled.project)}
    disputed = by_item[labelled.disputed.external_id]["annotations"]
    kinds = sorted((_provenance(a)["kind"], _provenance(a).get("round", "")) for a in disputed)
    assert kinds == [("adjudication", ""), ("label", "post"), ("label", "pre"), ("label", "pre")]
    for annotation in disputed:
        provenance = _provenance(annotation)
        assert annotation["ground_truth"] is (provenance["kind"] != "label")
        if provenance["kind"] == "label":
            assert provenance["stage"] == "1" and provenance["phase"] == "main" and provenance["labelled_at"]
            assert annotation["lead_time"] in (33.0, 0.0)
    final = next(a for a in disputed if _provenance(a)["kind"] == "adjudication")
    settled = next(f for f in labelled.finals if f.item_id == labelled.disputed.pk)
    assert _provenance(final)["method"] == settled.method == "discussion"
    assert final["result"][1]["value"]["choices"] == [settled.final_value]
    justified = [r for a in disputed for r in a["result"] if r["from_name"] == "q1_justification"]
    assert [r["value"]["text"] for r in justified] == [[JUSTIFICATION]]  # JSON keeps the text exact
    gold = by_item["gold-0"]["annotations"]
    assert len(by_item["item-1"]["annotations"]) == 3  # two labels and the unanimous final
    assert len(gold) == 1 and gold[0]["ground_truth"] is True and "completed_by" not in gold[0]
    assert _provenance(gold[0]) == {"kind": "gold"} and gold[0]["result"][1]["value"]["choices"] == ["yes"]


def test_completed_by_is_a_pseudonymous_email_stable_across_projects(labelled, make_user, settings):
    second = labelled_project(make_user, name="Another project", users=list(reversed(labelled.users)))

    def emails(project):
        found = {}
        for task in label_studio_tasks(project):
            for annotation in task["annotations"]:
                if "completed_by" in annotation:
                    found.setdefault(annotation["completed_by"]["email"], set()).add(task["data"]["external_id"])
        return found

    first_emails, second_emails = emails(labelled.project), emails(second.project)
    assert len(first_emails) == 2 and set(first_emails) == set(second_emails)  # the same people, the same names
    assert all(email.endswith("@pseudonyms.invalid") for email in first_emails)
    body = json.dumps(label_studio_tasks(labelled.project))
    assert "real-name" not in body and f'"completed_by": {labelled.users[0].pk}' not in body
    settings.ANNOTATOR_PSEUDONYM_SALT = "another deployment"
    assert not set(emails(labelled.project)) & set(first_emails)


def test_attribution_can_be_left_out(labelled):
    tasks = label_studio_tasks(labelled.project, attribution=False)
    annotations = [a for t in tasks for a in t["annotations"]]
    assert len(annotations) == 8 and not any("completed_by" in a for a in annotations)


def test_downloads_ship_tasks_and_config_for_researchers_only(labelled, researcher_client, client):
    base = reverse("annotation:labels-export", args=[labelled.project.pk, "labelstudio"])
    tasks = json.loads(researcher_client.get(base).content)
    assert len(tasks) == 3
    anonymous = researcher_client.get(
        reverse("annotation:labels-export", args=[labelled.project.pk, "labelstudio-anonymous"])
    )
    assert "completed_by" not in anonymous.content.decode()
    config = researcher_client.get(
        reverse("annotation:labels-export", args=[labelled.project.pk, "labelstudio-config"])
    )
    assert config["Content-Type"].startswith("application/xml") and ET.fromstring(config.content).tag == "View"
    api = researcher_client.get(
        reverse("annotation-labels-export", args=[labelled.project.pk]) + "?as=labelstudio-config"
    )
    assert api.status_code == 200 and api.content == config.content
    assert "labelstudio-config" in exports.FORMATS
    report = researcher_client.get(reverse("annotation:report", args=[labelled.project.pk])).content.decode()
    assert reverse("annotation:label-studio-import", args=[labelled.project.pk]) in report
    client.force_login(labelled.users[0])
    assert client.get(base).status_code == 403
