"""A recruit who fails the gate learns pass or fail and nothing more, on every door: no gold answer, no rationale,
no per-item correctness, no score and no count — on the training page, the pilot feedback page and API, the
training state (and the state a label submit returns), the enrolment API, the norming page, API and threads.
The pilot's gold goes only where the stage's feedback setting says: to those who passed the pilot, to everyone
once the pilot is closed, or to no one; the setting has one rule on the settings page, the API and the admin."""

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation.models import StageLabelling, Thread
from annotation.services.labelling import stage_labelling_configure
from annotation.workflow.pilot_feedback import GATE_FAILED, NO_FEEDBACK, NOT_PASSED

from .training_setup import build_stage, enrol, flip, through_examples

pytestmark = pytest.mark.django_db


def post_label(client, s, item, phase, value):
    body = {"valid": {"value": value, "justification": "not valid because" if value == "no" else ""}}
    return client.post(
        reverse("annotation-labels", args=[s.stage.pk]),
        {"item": item.pk, "phase": phase, "answers": body, "seconds": 9},
        content_type="application/json",
    )


def walk(client, s, *, pilot_wrong: int, qualification_wrong: int):
    """Through the API: the pilot with `pilot_wrong` flipped answers, norming, then the test; the last response."""
    for n, item in enumerate(s.pilot_items):
        post_label(client, s, item, "pilot", flip(s.gold[item.pk]) if n < pilot_wrong else s.gold[item.pk])
    assert client.post(f"/api/annotation/training/{s.stage.pk}/norming/").status_code == 200
    last = None
    for n, item in enumerate(s.qualification_items):
        value = flip(s.gold[item.pk]) if n < qualification_wrong else s.gold[item.pk]
        last = post_label(client, s, item, "qualification", value)
        assert last.status_code == 201, last.content
    return last


def assert_nothing_learnt(name: str, body: str) -> None:
    assert "GOLD-RATIONALE" not in body, name
    assert '"gold' not in body.lower() and "data-gold" not in body, name
    for needle in (
        "7 of 10",
        '"qualification_correct":7',
        "agreement 40",
        '"pilot_score":0.4',
        "40%",
        "40.0%",
        "below the",
    ):
        assert needle not in body, (name, needle)


def test_a_failing_recruit_sees_pass_or_fail_only_on_every_door(make_user):
    s = build_stage(pilot=5, qualification=10)
    user = make_user("annotator")
    through_examples(s, enrol(s, user))
    client = Client()
    client.force_login(user)
    stage_pk = s.stage.pk
    # A pilot of 2 of 5 (40 %): no feedback, whatever the door; the refusal says why, not how far off.
    for n, item in enumerate(s.pilot_items):
        post_label(client, s, item, "pilot", flip(s.gold[item.pk]) if n < 3 else s.gold[item.pk])
    thread = Thread.objects.filter(stage=s.stage, kind="norming").first()
    assert thread is not None  # the disagreements with gold opened threads; they discuss the gold
    page = client.get(reverse("annotation:training-feedback", args=[stage_pk]))
    api = client.get(f"/api/annotation/training/{stage_pk}/feedback/")
    assert page.status_code == api.status_code == 403
    assert api.json()["detail"] == NOT_PASSED
    norming_api = client.get(f"/api/annotation/training/{stage_pk}/norming/")
    assert norming_api.status_code == 403
    thread_page = client.get(reverse("annotation:thread", args=[thread.pk]))
    thread_api = client.get(f"/api/annotation/threads/{thread.pk}/comments/")
    assert thread_page.status_code == thread_api.status_code == 403
    norming_page = client.get(reverse("annotation:training-norming", args=[stage_pk]))
    assert norming_page.status_code == 200 and "data-norming-closed" in norming_page.content.decode()
    assert s.pilot_items[0].external_id not in norming_page.content.decode()
    state = client.get(f"/api/annotation/training/{stage_pk}/").json()
    assert state["pilot_feedback"] == {"shown": False, "refusal": NOT_PASSED}
    assert state["gate"]["pilot_score"] is None and state["gate"]["pilot_coverage"] is None

    # Then 7 of 10 on the test: failed. Pass or fail only, everywhere.
    client.post(f"/api/annotation/training/{stage_pk}/norming/")
    last = None
    for n, item in enumerate(s.qualification_items):
        last = post_label(client, s, item, "qualification", flip(s.gold[item.pk]) if n < 3 else s.gold[item.pk])
    bodies = {
        "last submit": last.content.decode(),
        "state": client.get(f"/api/annotation/training/{stage_pk}/").content.decode(),
        "training page": client.get(reverse("annotation:training-stage", args=[stage_pk])).content.decode(),
        "my training": client.get(reverse("annotation:my-training")).content.decode(),
        "enrolments": client.get("/api/annotation/enrollments/").content.decode(),
        "feedback api": client.get(f"/api/annotation/training/{stage_pk}/feedback/").content.decode(),
        "feedback page": client.get(reverse("annotation:training-feedback", args=[stage_pk])).content.decode(),
        "norming page": client.get(reverse("annotation:training-norming", args=[stage_pk])).content.decode(),
    }
    for name, body in bodies.items():
        assert_nothing_learnt(name, body)
    state = client.get(f"/api/annotation/training/{stage_pk}/").json()
    assert state["step"] == "failed" and state["gate"]["passed"] is False
    gate = state["gate"]
    assert [
        gate[k] for k in ("pilot_score", "qualification_correct", "qualification_total", "qualification_score")
    ] == [None] * 4
    assert gate["reasons"] == []
    enrolment = client.get("/api/annotation/enrollments/").json()["results"][0]
    assert enrolment["gate_passed"] is False and enrolment["gate_detail"] == {"passed": False}
    assert enrolment["pilot_score"] is enrolment["qualification_correct"] is enrolment["qualification_score"] is None
    assert GATE_FAILED in bodies["training page"]
    # The researcher still reads everything.
    researcher = Client()
    researcher.force_login(make_user("researcher"))
    full = researcher.get(f"/api/annotation/enrollments/?stage={stage_pk}").json()["results"][0]
    assert full["qualification_correct"] == 7 and full["gate_detail"]["reasons"]


def test_pilot_gold_after_close_reaches_everyone_and_never_reaches_no_one(make_user, researcher_client):
    s = build_stage(pilot=5, qualification=10)
    failing, passing = make_user("annotator"), make_user("annotator")
    clients = {}
    for user in (failing, passing):
        through_examples(s, enrol(s, user))
        clients[user] = Client()
        clients[user].force_login(user)
    settings_url = reverse("annotation-main-settings", args=[s.stage.pk])
    assert researcher_client.put(settings_url, {"pilot_feedback": "after_close"}, content_type="application/json")
    walk(clients[failing], s, pilot_wrong=3, qualification_wrong=3)
    walk(clients[passing], s, pilot_wrong=0, qualification_wrong=0)
    feedback = f"/api/annotation/training/{s.stage.pk}/feedback/"
    for user in (failing, passing):  # the pilot is open: no one sees its gold yet
        assert clients[user].get(feedback).status_code == 403
    closed = researcher_client.put(settings_url, {"pilot_closed": True}, content_type="application/json")
    assert closed.status_code == 200 and closed.json()["pilot_closed"] is True
    shown = clients[failing].get(feedback)
    assert shown.status_code == 200 and "GOLD-RATIONALE-pilot0" in shown.content.decode()
    state = clients[failing].get(f"/api/annotation/training/{s.stage.pk}/").json()
    assert state["gate"]["qualification_correct"] is None  # the test's counts stay hidden from who failed
    assert state["gate"]["pilot_score"] == 0.4  # their pilot's score goes with its gold
    passed_state = clients[passing].get(f"/api/annotation/training/{s.stage.pk}/").json()
    assert passed_state["gate"]["qualification_correct"] == 10  # who passed sees their score

    # A closed pilot whose gold everyone saw cannot reopen: the same rule on the API, the page and the admin.
    reopen = researcher_client.put(settings_url, {"pilot_closed": False}, content_type="application/json")
    assert reopen.status_code == 400 and "cannot reopen" in str(reopen.json())
    page = researcher_client.post(
        reverse("annotation:stage-action", args=[s.stage.pk, "labelling"]),
        {"strategy": "order", "seed": "0", "reservation_minutes": "30", "pilot_feedback": "after_close"},
    )
    assert page.status_code == 400 and "cannot reopen" in page.content.decode()
    settings = StageLabelling.objects.get(stage=s.stage)
    settings.pilot_closed = False
    with pytest.raises(ValidationError, match="cannot reopen"):
        settings.full_clean()  # what the admin's form runs
    bad = researcher_client.put(settings_url, {"pilot_feedback": "sometimes"}, content_type="application/json")
    assert bad.status_code == 400

    # "never": not even a recruit who passed sees the pilot's gold.
    other = build_stage(pilot=5, qualification=10)
    stage_labelling_configure(stage=other.stage, pilot_feedback="never")
    user = make_user("annotator")
    through_examples(other, enrol(other, user))
    client = Client()
    client.force_login(user)
    walk(client, other, pilot_wrong=0, qualification_wrong=0)
    refused = client.get(f"/api/annotation/training/{other.stage.pk}/feedback/")
    assert refused.status_code == 403 and refused.json()["detail"] == NO_FEEDBACK
