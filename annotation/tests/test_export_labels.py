"""Label exports: every label with its provenance (pseudonym, stage, phase, round, time, justification) as
CSV and JSONL; CSV cells that a spreadsheet would run as formulas are neutralised (the Label Studio export
has its own tests, test_label_studio_*)."""

import csv
import io
import json

import pytest
from django.urls import reverse

from annotation.selectors import exports
from annotation.services.adjudication import discussion_answers_submit
from annotation.services.labelling import label_next, main_label_submit
from annotation.workflow.answers import Answer

from .main_setup import build_main_stage, pass_gate

pytestmark = pytest.mark.django_db
FORMULA = '=HYPERLINK("http://evil","x")'


@pytest.fixture
def labelled(make_user):
    s = build_main_stage(items=1, overlap=2, policy="discussion_senior")
    users = [make_user("annotator", username=f"real-name-{n}") for n in range(2)]
    for user, value in zip(users, ["yes", "no"], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        justification = FORMULA if value == "no" else ""
        main_label_submit(
            annotator=user,
            stage=s.stage,
            item=item,
            answers={"q1": Answer(value=value, justification=justification)},
            seconds=33,
        )
    discussion_answers_submit(stage=s.stage, item=s.items[0], annotator=users[1], answers={"q1": Answer(value="yes")})
    return s


def test_jsonl_has_every_label_with_provenance_and_no_real_names(labelled):
    records = [json.loads(line) for line in exports.labels_jsonl(labelled.project).splitlines()]
    assert len(records) == 3  # two first answers and one post-discussion answer
    assert {(r["annotator"], r["round"], r["value"]) for r in records} == {
        ("A01", "pre", "yes"),
        ("A02", "pre", "no"),
        ("A02", "post", "yes"),
    }
    first = records[0]
    assert first["stage"] == 1 and first["phase"] == "main" and first["seconds"] == 33.0
    assert first["labelled_at"] and first["question"] == "q1" and first["external_id"] == "item-0"
    assert "real-name" not in exports.labels_jsonl(labelled.project)
    assert any(r["justification"] == FORMULA for r in records)  # JSON keeps the text exact


def test_csv_neutralises_formula_cells(labelled):
    rows = list(csv.DictReader(io.StringIO(exports.labels_csv(labelled.project))))
    assert len(rows) == 3
    justifications = [row["justification"] for row in rows if row["justification"]]
    assert justifications == ["'" + FORMULA]


def test_downloads_are_for_researchers(labelled, researcher_client, client):
    for fmt in exports.FORMATS:
        response = researcher_client.get(reverse("annotation:labels-export", args=[labelled.project.pk, fmt]))
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    api = researcher_client.get(reverse("annotation-labels-export", args=[labelled.project.pk]) + "?as=csv")
    assert api.status_code == 200 and api.content.decode().startswith("project,item_id")
    client.force_login(labelled.stage.enrollments.first().user)
    assert client.get(reverse("annotation:labels-export", args=[labelled.project.pk, "csv"])).status_code == 403
