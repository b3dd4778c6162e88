"""Acceptance 3: with the persona cue hidden (the default), no persona statement and no student name from
the audit's conditions reaches an annotator — not on the labelling page, not in the API's next-item or
discussion answers. Shown (a project setting), the same transcripts do carry them, so the check can fail."""

import pytest
from django.urls import reverse

from annotation.judge_validation.audit_source import persona_cue_of
from annotation.judge_validation.payload import PersonaCue, redact
from annotation.models import AnnotationProject
from annotation.selectors.judge_validation import sampled_items, validation_stage
from audits.models import Condition, Turn

from .judge_validation_setup import passed_annotators, run_simulation_audit

pytestmark = pytest.mark.django_db


def cue_strings(audit) -> list[str]:
    strings = []
    for condition in Condition.objects.filter(audit=audit):
        cue = persona_cue_of(condition)
        strings += [s for s in cue.statements if s] + ([cue.name] if cue.name else [])
    return [s.lower() for s in strings]


def leaked(text: str, cues: list[str]) -> list[str]:
    lowered = text.lower()
    return [cue for cue in cues if cue in lowered]


def test_redaction_removes_statements_and_the_name_as_a_word():
    cue = PersonaCue(statements=("Hi, I'm Omar.", "English is not my first language."), name="Omar")
    text = "Hi, I'm Omar. English is NOT my first language. Omar's answer; Omarion is another name."
    assert redact(text, cue) == "[persona cue hidden] [persona cue hidden] [student]'s answer; Omarion is another name."


def test_no_persona_cue_reaches_annotators_when_hidden(client, researcher, make_user):
    audit = run_simulation_audit("persona audit", questions=2)
    cues = cue_strings(audit)
    transcripts = " ".join(Turn.objects.filter(dialogue__audit=audit).values_list("text", flat=True))
    assert len(leaked(transcripts, cues)) >= 3  # the raw transcripts do carry statements and names

    client.force_login(researcher)
    created = client.post(
        reverse("annotation-jv-create"),
        {"audit": audit.pk, "size": 30, "seed": 0, "training_pool": 4},
        content_type="application/json",
    )
    assert created.status_code == 201 and created.json()["hide_persona_cue"] is True
    project = AnnotationProject.objects.get(pk=created.json()["project"])
    stage = validation_stage(project)
    # The sample reaches the turns where the student introduces itself (the first tutor turn follows it).
    assert any(item.payload["highlight"] == 1 for item in sampled_items(project))

    [annotator] = passed_annotators(stage, make_user, count=1)
    client.force_login(annotator)
    seen = 0
    while True:
        page = client.get(reverse("annotation:label", args=[stage.pk]))
        assert page.status_code == 200
        api = client.get(reverse("annotation-main-next", args=[stage.pk]))
        if api.status_code == 204:
            break
        body = api.json()
        assert not leaked(page.content.decode(), cues), "persona cue on the labelling page"
        assert not leaked(api.content.decode(), cues), "persona cue in the next-item API"
        assert "metadata" not in body["item"]
        answers = {q["key"]: {"value": "1"} for q in body["questions"]}
        done = client.post(
            reverse("annotation-main-submit", args=[stage.pk]),
            {"item": body["item"]["id"], "answers": answers},
            content_type="application/json",
        )
        assert done.status_code == 201
        discussion = client.get(reverse("annotation-main-discussion", args=[stage.pk, body["item"]["id"]]))
        assert discussion.status_code == 404  # blind: the other labels are not in, there is nothing to see
        seen += 1
    assert seen == 30
    assert "[persona cue hidden]" in " ".join(
        t["text"] for item in sampled_items(project) for t in item.payload["turns"]
    )

    # Shown: the same items now carry the cues (what the test above would have caught).
    client.force_login(researcher)
    shown = client.post(
        reverse("annotation-jv-persona", args=[project.pk]), {"hidden": False}, content_type="application/json"
    )
    assert shown.status_code == 200
    payloads = " ".join(t["text"] for item in sampled_items(project) for t in item.payload["turns"])
    assert leaked(payloads, cues)
