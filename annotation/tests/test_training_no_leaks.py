"""An annotator never receives gold labels or rationales of pilot or qualification items before
submitting them, nor other annotators' labels — on pages and in the API."""

import pytest
from django.urls import reverse

from annotation.models import GoldLabel, Label

from .training_setup import build_stage, enrol, through_examples, walk_to_decision

pytestmark = pytest.mark.django_db

OTHER_JUSTIFICATION = "OTHER-ANNOTATOR-SECRET-JUSTIFICATION"


def gold_rationales(s):
    return list(
        GoldLabel.objects.filter(item__in=s.pilot_items + s.qualification_items).values_list("rationale", flat=True)
    )


def assert_no_gold(body: str, s):
    assert "GOLD-RATIONALE" not in body
    for rationale in gold_rationales(s):
        assert rationale not in body
    assert '"gold' not in body.lower()


def test_pilot_and_qualification_pages_and_api_carry_no_gold(annotator_client, annotator):
    s = build_stage(pilot=3, qualification=10)
    enrollment = enrol(s, annotator)
    through_examples(s, enrollment)
    stage_pk = s.stage.pk
    for n, item in enumerate(s.pilot_items):
        page = annotator_client.get(reverse("annotation:training-pilot", args=[stage_pk])).content.decode()
        assert f"pilot question {n}" in page
        assert_no_gold(page, s)
        api = annotator_client.get(f"/api/annotation/training/{stage_pk}/pilot/next/").content.decode()
        assert_no_gold(api, s)
        # Before the last pilot answer, feedback (the gold) is refused on the page and in the API.
        assert annotator_client.get(reverse("annotation:training-feedback", args=[stage_pk])).status_code == 403
        assert annotator_client.get(f"/api/annotation/training/{stage_pk}/feedback/").status_code == 403
        annotator_client.post(  # the gold answer: a pilot that passes sees its feedback
            reverse("annotation:training-pilot", args=[stage_pk]),
            {"item": item.pk, "answer-valid": s.gold[item.pk], "justification-valid": "because"},
        )
    feedback = annotator_client.get(reverse("annotation:training-feedback", args=[stage_pk])).content.decode()
    assert "GOLD-RATIONALE-pilot1" in feedback  # after submission: gold and rationale, per item
    assert "GOLD-RATIONALE-qual" not in feedback  # never the qualification test's
    annotator_client.post(reverse("annotation:training-norming", args=[stage_pk]))
    for _ in range(3):
        page = annotator_client.get(reverse("annotation:training-qualification", args=[stage_pk])).content.decode()
        assert "qual question" in page
        assert "GOLD-RATIONALE-qual" not in page
        api = annotator_client.get(f"/api/annotation/training/{stage_pk}/qualification/next/").content.decode()
        assert "GOLD-RATIONALE" not in api and '"gold' not in api.lower()


def test_researcher_api_with_gold_is_closed_to_annotators(annotator_client):
    s = build_stage()
    assert annotator_client.get(f"/api/annotation/gold-labels/?project={s.project.pk}").status_code == 403
    assert annotator_client.get(f"/api/annotation/items/{s.pilot_items[0].pk}/").status_code == 403
    assert annotator_client.get(f"/api/annotation/worked-examples/?stage={s.stage.pk}").status_code == 403
    assert annotator_client.get(reverse("annotation:stage", args=[s.stage.pk])).status_code == 403


def test_other_annotators_labels_never_reach_an_annotator(client, make_user):
    s = build_stage(pilot=3)
    other = make_user("annotator")
    walk_to_decision(s, other, pilot_values=["no", "yes", "no"])  # disagrees with gold on every pilot item
    # A distinctive justification on the other annotator's pilot labels, which must never show up.
    Label.objects.filter(assignment__annotator=other, phase="pilot").update(justification=OTHER_JUSTIFICATION)

    me = make_user("annotator")
    client.force_login(me)
    enrollment = enrol(s, me)
    through_examples(s, enrollment)
    for item in s.pilot_items:  # gold answers: a passed pilot, so its feedback and threads are open to me
        client.post(
            reverse("annotation:training-pilot", args=[s.stage.pk]),
            {"item": item.pk, "answer-valid": s.gold[item.pk], "justification-valid": "because"},
        )
    stage_pk = s.stage.pk
    bodies = [
        client.get(reverse("annotation:training-feedback", args=[stage_pk])).content.decode(),
        client.get(reverse("annotation:training-norming", args=[stage_pk])).content.decode(),
        client.get(f"/api/annotation/training/{stage_pk}/feedback/").content.decode(),
        client.get(f"/api/annotation/training/{stage_pk}/norming/").content.decode(),
        client.get("/api/annotation/enrollments/").content.decode(),
    ]
    threads = client.get(f"/api/annotation/training/{stage_pk}/norming/").json()
    assert threads, "the other annotator's disagreements opened norming threads"
    for thread in threads:
        bodies.append(client.get(reverse("annotation:thread", args=[thread["id"]])).content.decode())
        bodies.append(client.get(f"/api/annotation/threads/{thread['id']}/comments/").content.decode())
    for body in bodies:
        assert OTHER_JUSTIFICATION not in body
        assert other.username not in body
    # The enrolment list holds only the caller's own enrolment.
    assert [e["username"] for e in client.get("/api/annotation/enrollments/").json()["results"]] == [me.username]
