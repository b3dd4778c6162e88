"""Acceptance 1: an annotator walks every training step through HTTP (pages and API), and the server
refuses every step taken out of order with 403 — a main-stage label before passing included."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Enrollment, Label

from .training_setup import build_stage, enrol, flip

pytestmark = pytest.mark.django_db


def post_label_api(client, s, item, phase, value="yes"):
    body = {"valid": {"value": value, "justification": "not valid because" if value == "no" else ""}}
    return client.post(
        reverse("annotation-labels", args=[s.stage.pk]),
        {"item": item.pk, "phase": phase, "answers": body, "seconds": 9},
        content_type="application/json",
    )


def test_every_step_in_order_through_the_pages(annotator_client, annotator):
    s = build_stage(pilot=4, qualification=10)
    enrol(s, annotator)
    stage_pk = s.stage.pk

    # Nothing but the guideline is open at first.
    assert annotator_client.get(reverse("annotation:training-examples", args=[stage_pk])).status_code == 403
    assert annotator_client.get(reverse("annotation:training-pilot", args=[stage_pk])).status_code == 403
    assert post_label_api(annotator_client, s, s.pilot_items[0], "pilot").status_code == 403

    page = annotator_client.get(reverse("annotation:training-stage", args=[stage_pk]))
    assert "Read and confirm the guideline" in page.content.decode()
    response = annotator_client.post(reverse("annotation:training-guideline", args=[stage_pk]), {"version": 1})
    assert response.status_code == 302

    # Examples before the pilot.
    assert annotator_client.get(reverse("annotation:training-pilot", args=[stage_pk])).status_code == 403
    for example in s.stage.worked_examples.all():
        page = annotator_client.get(reverse("annotation:training-examples", args=[stage_pk]))
        assert page.status_code == 200
        annotator_client.post(reverse("annotation:training-examples", args=[stage_pk]), {"example": example.pk})

    # The pilot; the qualification test stays closed until the pilot and the norming step are done.
    qualification_url = reverse("annotation:training-qualification", args=[stage_pk])
    assert annotator_client.get(qualification_url).status_code == 403
    for item in s.pilot_items:
        value = s.gold[item.pk]
        response = annotator_client.post(
            reverse("annotation:training-pilot", args=[stage_pk]),
            {"item": item.pk, "answer-valid": value, "justification-valid": "reason", "seconds": "20.5"},
        )
        assert response.status_code == 302
    assert response.url == reverse("annotation:training-feedback", args=[stage_pk])
    feedback = annotator_client.get(response.url)
    assert feedback.status_code == 200
    assert "GOLD-RATIONALE" in feedback.content.decode()

    assert annotator_client.post(qualification_url, {"item": s.qualification_items[0].pk}).status_code == 403
    assert annotator_client.post(reverse("annotation:training-norming", args=[stage_pk])).status_code == 302

    # A main label is still refused: the gate has not passed.
    assignment = Assignment.objects.create(stage=s.stage, item=s.main_items[0], annotator=annotator, phase="main")
    assert post_label_api(annotator_client, s, s.main_items[0], "main").status_code == 403

    for n, item in enumerate(s.qualification_items):
        value = s.gold[item.pk] if n < 8 else flip(s.gold[item.pk])  # 8 of 10: exactly the threshold
        response = annotator_client.post(
            qualification_url, {"item": item.pk, "answer-valid": value, "justification-valid": "r", "seconds": "3"}
        )
        assert response.status_code == 302

    enrollment = Enrollment.objects.get(stage=s.stage, user=annotator)
    assert enrollment.gate_passed is True
    assert enrollment.status == "passed"
    assert (enrollment.qualification_correct, enrollment.qualification_total) == (8, 10)
    assert enrollment.pilot_score == 1.0
    page = annotator_client.get(reverse("annotation:training-stage", args=[stage_pk])).content.decode()
    assert "You passed the gate" in page

    # Now the main label goes through, once: a repeated submit changes nothing.
    first = post_label_api(annotator_client, s, s.main_items[0], "main")
    assert first.status_code == 201, first.content
    again = post_label_api(annotator_client, s, s.main_items[0], "main", value="no")
    assert again.status_code == 200
    assert Label.objects.filter(assignment=assignment).count() == 1
    assert Label.objects.get(assignment=assignment).value == "yes"
    assert Label.objects.filter(phase="pilot", assignment__annotator=annotator).first().seconds == 20.5


def test_every_step_in_order_through_the_api(annotator_client, annotator):
    s = build_stage(pilot=3, qualification=10)
    enrol(s, annotator)
    base = f"/api/annotation/training/{s.stage.pk}/"
    assert annotator_client.get(base).json()["step"] == "guideline"
    assert annotator_client.get(base + "examples/").status_code == 403
    assert annotator_client.get(base + "pilot/next/").status_code == 403
    assert (
        annotator_client.post(base + "guideline/", {"version": 1}, content_type="application/json").status_code == 200
    )

    examples = annotator_client.get(base + "examples/").json()
    assert annotator_client.get(base + "pilot/next/").status_code == 403
    for example in examples:
        assert annotator_client.post(base + f"examples/{example['id']}/seen/").status_code == 200
    assert annotator_client.get(base).json()["step"] == "pilot"

    assert annotator_client.get(base + "feedback/").status_code == 403
    by_id = {item.pk: item for item in s.pilot_items}
    for _ in s.pilot_items:
        nxt = annotator_client.get(base + "pilot/next/").json()
        assert "gold" not in str(nxt).lower()
        item = by_id[nxt["item"]["id"]]
        assert post_label_api(annotator_client, s, item, "pilot", s.gold[item.pk]).status_code == 201
    # Once the pilot is in, there is no next pilot item ("no item": 204, as every next-item endpoint answers)
    # and no second pilot.
    assert annotator_client.get(base + "pilot/next/").status_code == 204
    assert post_label_api(annotator_client, s, s.pilot_items[0], "pilot").status_code == 403
    state = annotator_client.get(base).json()
    assert state["step"] == "norming"
    assert annotator_client.get(base + "feedback/").json()["pilot_score"] == 1.0
    assert annotator_client.get(base + "qualification/next/").status_code == 403
    assert post_label_api(annotator_client, s, s.qualification_items[0], "qualification").status_code == 403
    assert annotator_client.post(base + "norming/").status_code == 200

    for n, item in enumerate(s.qualification_items):
        value = s.gold[item.pk] if n < 7 else flip(s.gold[item.pk])  # 7 of 10: below the threshold
        assert post_label_api(annotator_client, s, item, "qualification", value).status_code == 201
    state = annotator_client.get(base).json()
    assert state["step"] == "failed"
    assert state["gate"]["passed"] is False
    # Pass or fail only: no count, no score, no reason to learn the test's answers from.
    assert state["gate"]["qualification_correct"] is None and state["gate"]["qualification_score"] is None
    assert state["gate"]["reasons"] == []
    # Failed annotators never reach main items.
    Assignment.objects.create(stage=s.stage, item=s.main_items[0], annotator=annotator, phase="main")
    assert post_label_api(annotator_client, s, s.main_items[0], "main").status_code == 403


def test_not_enrolled_is_refused(annotator_client):
    s = build_stage()
    assert annotator_client.get(reverse("annotation:training-guideline", args=[s.stage.pk])).status_code == 403
    assert annotator_client.get(f"/api/annotation/training/{s.stage.pk}/").status_code == 403
    assert post_label_api(annotator_client, s, s.pilot_items[0], "pilot").status_code == 403
