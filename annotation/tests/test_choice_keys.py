"""Keyboard keys of label choices (annotation.workflow.choice_keys): the digit typed is the value shown on a
numeric scale, 1…9 by position on a category list, no key past nine; questions made through the service
or the researcher API, and questions stored earlier with other keys, all show the derived keys."""

import pytest

from annotation.models import LabelQuestion
from annotation.selectors.label_form import label_form_questions
from annotation.services.projects import project_create, question_create, stage_create
from annotation.workflow.choice_keys import choice_keys

ELEVEN = [f"category {n}" for n in range(1, 12)]  # SafeTutors has 11 risk categories


@pytest.mark.parametrize(
    ("values", "keys"),
    [
        (["0", "1", "2"], ["0", "1", "2"]),
        (["1", "2", "3", "4", "5"], ["1", "2", "3", "4", "5"]),
        (["yes", "no"], ["1", "2"]),
        (ELEVEN, [str(n) for n in range(1, 10)] + ["", ""]),
        (["-1", "0", "1", "2"], ["3", "0", "1", "2"]),  # digits keep their value; the rest take free digits
    ],
)
def test_choice_keys(values, keys):
    assert choice_keys(values) == keys


@pytest.mark.django_db
def test_every_door_shows_the_derived_keys(researcher_client):
    project = project_create(name="Keys", categories=["A"])
    rubric = question_create(
        project=project,
        key="tone",
        prompt="Tone?",
        choices=[{"value": v, "key": str(int(v) + 1)} for v in ("0", "1", "2")],  # the old, off-by-one keys
        allow_not_applicable=True,
    )
    assert [c["key"] for c in rubric.choices] == ["0", "1", "2"]
    response = researcher_client.post(
        "/api/annotation/questions/",
        {"project": project.pk, "key": "risk", "prompt": "Risk?", "choices": [{"value": v} for v in ELEVEN]},
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert [c["key"] for c in response.json()["choices"]][:2] == ["1", "2"]
    # A question stored before keys were derived still shows (and takes) the digit of its value.
    LabelQuestion.objects.filter(pk=rubric.pk).update(
        choices=[{"value": v, "label": v, "key": str(int(v) + 1)} for v in ("0", "1", "2")]
    )
    stage = stage_create(project=project, name="S", questions=list(project.questions.all()))
    form = {q["key"]: [c["key"] for c in q["choices"]] for q in label_form_questions(stage)}
    assert form == {"tone": ["0", "1", "2", "n"], "risk": [str(n) for n in range(1, 10)] + ["", ""]}
