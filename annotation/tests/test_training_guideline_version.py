"""A new guideline version asks every annotator to confirm again: until they do, the next step is the
guideline and every later action — main labelling included — is refused by the server."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.training import guideline_publish

from .training_setup import build_stage, enrol, through_examples, walk_to_decision

pytestmark = pytest.mark.django_db


def pilot_post(client, s, item):
    return client.post(
        reverse("annotation:training-pilot", args=[s.stage.pk]),
        {"item": item.pk, "answer-valid": s.gold[item.pk], "justification-valid": "r"},
    )


def test_new_version_mid_pilot_requires_confirmation(annotator_client, annotator):
    s = build_stage(pilot=3)
    enrollment = enrol(s, annotator)
    through_examples(s, enrollment)
    assert pilot_post(annotator_client, s, s.pilot_items[0]).status_code == 302

    guideline_publish(stage=s.stage, text="# Guideline v2\n\nA clarified rule.", change_note="clarified")
    assert pilot_post(annotator_client, s, s.pilot_items[1]).status_code == 403
    state = annotator_client.get(f"/api/annotation/training/{s.stage.pk}/").json()
    assert state["step"] == "guideline" and state["guideline_version"] == 2

    # A page opened on version 1 cannot confirm version 2 unread.
    stale = annotator_client.post(reverse("annotation:training-guideline", args=[s.stage.pk]), {"version": 1})
    assert stale.status_code == 403
    page = annotator_client.get(reverse("annotation:training-guideline", args=[s.stage.pk])).content.decode()
    assert "A clarified rule." in page and "clarified" in page
    assert (
        annotator_client.post(reverse("annotation:training-guideline", args=[s.stage.pk]), {"version": 2}).status_code
        == 302
    )
    assert pilot_post(annotator_client, s, s.pilot_items[1]).status_code == 302


def test_new_version_after_passing_blocks_main_labels_until_confirmed(client, make_user):
    s = build_stage(pilot=2)
    user = make_user("annotator")
    enrollment = walk_to_decision(s, user)
    assert enrollment.gate_passed
    Assignment.objects.create(stage=s.stage, item=s.main_items[0], annotator=user, phase="main")
    client.force_login(user)
    url = reverse("annotation-labels", args=[s.stage.pk])
    body = {"item": s.main_items[0].pk, "phase": "main", "answers": {"valid": {"value": "yes"}}}

    guideline_publish(stage=s.stage, text="# v2")
    refused = client.post(url, body, content_type="application/json")
    assert refused.status_code == 403
    assert "guideline" in refused.json()["detail"]
    client.post(f"/api/annotation/training/{s.stage.pk}/guideline/", {"version": 2}, content_type="application/json")
    assert client.post(url, body, content_type="application/json").status_code == 201
