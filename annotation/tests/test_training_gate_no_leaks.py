"""A recruit who fails the gate learns pass or fail and nothing more, on every door: no gold answer, no rationale,
no per-item correctness, no score and no count — on the training page, the pilot feedback page and API, the
training state (and the state a label submit returns), the enrolment API, the norming page, API and threads.
The pilot's gold goes only where the stage's feedback setting says: to those who passed the pilot, to everyone
once the pilot is closed, or to no one; the setting has one rule on the settings page, the API and the admin.
Twelve made-up crowd identities who fail, over HTTP from the entry link on, assemble none of the pilot's gold."""

import json
import re

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

from annotation.models import CrowdRecruit, StageLabelling, Thread
from annotation.selectors.crowd_outcomes import crowd_outcome_rows
from annotation.services.crowd_entry_settings import crowd_link_save
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


# --- A hostile crowd over HTTP: twelve made-up ids through an unsigned link ---------------------------------------

LEAKY_KEY = re.compile(r"gold|correct|score|rationale|agreement", re.IGNORECASE)
# The counts a failing identity would learn from: 1 of 4 on the pilot (25 %), 2 of 3 on the test (67 %).
COUNT_NEEDLES = ("1 of 4", "2 of 3", "25 %", "25%", "25.0", "0.25", "67 %", "67%", "66.7", "0.66")


def leaks(value, path="") -> list[str]:
    """Where a JSON body holds a gold answer, a correctness or a score: a key so named with a value."""
    if isinstance(value, dict):
        found = []
        for key, inner in value.items():
            if LEAKY_KEY.search(key) and inner not in (None, [], {}, ""):
                found.append(f"{path}.{key}={inner!r}")
            found.extend(leaks(inner, f"{path}.{key}"))
        return found
    if isinstance(value, list):
        return [leak for n, inner in enumerate(value) for leak in leaks(inner, f"{path}[{n}]")]
    return []


def item_of(s, pk: int):
    return next(item for item in [*s.pilot_items, *s.qualification_items] if item.pk == pk)


def answer_all(browser, s, phase: str, wrong: set[int], seen: dict, who: str) -> None:
    """Through the API as a client would: each next item, answered, the `wrong` steps flipped."""
    api = f"/api/annotation/training/{s.stage.pk}"
    total = browser.get(f"{api}/").json()[phase]["total"]
    for step in range(total):
        shown = browser.get(f"{api}/{phase}/next/")
        assert shown.status_code == 200, (who, phase, step, shown.content)
        seen[f"{who} {phase} item {step}"] = shown.content.decode()
        item = shown.json()["item"]["id"]
        value = flip(s.gold[item]) if step in wrong else s.gold[item]
        submitted = post_label(browser, s, item_of(s, item), phase, value)
        assert submitted.status_code == 201, submitted.content
        seen[f"{who} {phase} submit {step}"] = submitted.content.decode()


def probe(browser, link, doors: list[str], seen: dict, who: str) -> None:
    for door in doors:
        response = browser.get(door, follow=not door.startswith("/api/"))
        seen[f"{who} GET {door}"] = response.content.decode()
        if door.endswith("/feedback/"):  # refused while working; once screened out, pages lead to the result
            landed = response.redirect_chain[-1][0] if getattr(response, "redirect_chain", None) else door
            assert response.status_code == 403 or landed == f"/annotation/crowd/{link.key}/done/", (who, door)


def test_twelve_made_up_crowd_ids_who_fail_learn_no_gold_and_no_count_on_any_door(researcher):
    s = build_stage(pilot=4, qualification=3, examples=1, min_correct=3)
    link = crowd_link_save(stage=s.stage, values={"max_recruits": 20, "items_per_recruit": 2})
    assert not link.signature_required and not link.approved_only  # the link trusts any id
    stage_pk = s.stage.pk
    api = f"/api/annotation/training/{stage_pk}"
    # The doors that hold gold or counts, probed by every identity; every other door by the first and the last.
    gold_doors = [f"{api}/feedback/", f"{api}/", f"/annotation/training/{stage_pk}/feedback/"]
    other_doors = [
        f"{api}/norming/",
        f"{api}/pilot/next/",
        "/api/annotation/enrollments/",
        "/api/annotation/gold-labels/",
        f"/annotation/training/{stage_pk}/",
        f"/annotation/training/{stage_pk}/norming/",
        "/annotation/training/",
    ]
    result_page = f"/annotation/crowd/{link.key}/done/"
    seen: dict[str, str] = {}  # every door's body, by identity and door
    for n in range(12):
        browser = Client()  # one browser per made-up identity
        query = {"PROLIFIC_PID": f"madeup-{n:02d}", "STUDY_ID": "study-1", "SESSION_ID": f"sess-{n}"}
        assert browser.get(f"/annotation/crowd/{link.key}/", query).status_code == 200
        entered = browser.post(f"/annotation/crowd/{link.key}/", query, REMOTE_ADDR=f"10.30.0.{n}")
        assert entered.status_code == 302, entered.content
        assert browser.post(f"{api}/guideline/", {}, content_type="application/json").status_code == 200
        for example in browser.get(f"{api}/examples/").json():
            assert browser.post(f"{api}/examples/{example['id']}/seen/").status_code == 200
        doors = gold_doors + (other_doors if n in (0, 11) else [])
        # The pilot: three of four answers wrong (a different three for each identity).
        answer_all(browser, s, "pilot", {(n + k) % 4 for k in range(3)}, seen, f"{n}")
        probe(browser, link, doors, seen, f"{n} after the pilot")
        assert browser.get(f"{api}/feedback/").json()["detail"] == NOT_PASSED
        assert browser.post(f"{api}/norming/").status_code == 200
        # The test: one answer wrong of three, each identity flipping another (what counts would give away).
        answer_all(browser, s, "qualification", {n % 3}, seen, f"{n}")
        probe(browser, link, [*doors, result_page], seen, f"{n} after failing")
        assert "data-completion-code" in seen[f"{n} after failing GET {result_page}"]

    for door, body in seen.items():
        assert "GOLD-RATIONALE" not in body and "data-gold" not in body, door
        for needle in COUNT_NEEDLES:
            assert needle not in body, (door, needle)
        try:
            parsed = json.loads(body)
        except ValueError:
            continue
        assert leaks(parsed) == [], door
    # What the twelve together learnt of the pilot's gold: no body names a pilot item beside a gold or a correctness.
    revealed = {
        item.external_id
        for item in s.pilot_items
        for body in seen.values()
        if item.external_id in body and re.search(r"gold|correct", body, re.IGNORECASE)
    }
    assert revealed == set()
    assert CrowdRecruit.objects.count() == 12
    assert {row["status"] for row in crowd_outcome_rows(s.stage)} == {"screened_out"}  # the researcher's list
