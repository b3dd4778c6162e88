"""Gold isolation: gold of training items reaches an annotator only as feedback on their
own submitted pilot labels. A guideline version carries pinned clarifications without the item they came
from, and refuses a text or a pin that names, quotes or explains a training item; a worked example is
never another stage's test item; pilot feedback covers only the items the annotator submitted; the
qualification result shows scores, never gold."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Comment, Enrollment, Item, Stage, Thread, TrainingItem
from annotation.selectors.training import pilot_feedback
from annotation.services.projects import gold_label_set, stage_create
from annotation.services.training import (
    SetupError,
    comment_pin,
    comment_post,
    guideline_publish,
    worked_example_add,
)

from .training_setup import build_stage, enrol, label_all, through_examples, walk_to_decision

pytestmark = pytest.mark.django_db


def annotator_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_guideline_carries_clarifications_without_training_items(make_user):
    s = build_stage(pilot=2, qualification=10)
    disagreeing = make_user("annotator")
    enrollment = enrol(s, disagreeing)
    through_examples(s, enrollment)
    label_all(s, disagreeing, s.pilot_items, ["no", "no"], "pilot")  # item 0 is gold "yes": a norming thread
    thread = Thread.objects.get(stage=s.stage, kind="norming")
    moderator = make_user("adjudicator")
    rule = comment_post(thread=thread, author=moderator, body="A question with two parts is invalid.", moderator=True)
    comment_pin(comment=rule)

    v2 = guideline_publish(stage=s.stage, text="# Guideline v2")
    assert "- A question with two parts is invalid." in v2.text
    assert thread.item.external_id not in v2.text and "(item" not in v2.text

    # Anything that names, quotes or explains a training item (any stage's) is refused: as a pin …
    rationale = s.gold[s.qualification_items[3].id]
    leaky = {
        f"As in {s.pilot_items[0].external_id}, answer yes.": "names the training item pilot-0",
        f"Remember {s.qualification_items[3].external_id}.": "names the training item qual-3",
        "Why: GOLD-RATIONALE-qual3: the reason this item is " + rationale: "quotes a gold rationale",
    }
    for body, reason in leaky.items():
        comment = comment_post(thread=thread, author=moderator, body=body, moderator=True)
        with pytest.raises(SetupError, match=reason):
            comment_pin(comment=comment)
        assert not Comment.objects.get(pk=comment.pk).pinned
    # … through the page and the API, which say why …
    moderator_client = annotator_client(moderator)
    page = moderator_client.post(reverse("annotation:comment-pin", args=[comment.pk]), {"pinned": "1"}, follow=True)
    assert "cannot be pinned" in page.content.decode()
    api = moderator_client.post(f"/api/annotation/comments/{comment.pk}/pin/", {}, content_type="application/json")
    assert api.status_code == 400 and "quotes a gold rationale" in api.json()["detail"]
    # … and as guideline text (an old version's "(item pilot-0) …" pasted into the next one).
    with pytest.raises(SetupError, match="names the training item pilot-0"):
        guideline_publish(stage=s.stage, text=v2.text + "\n- (item pilot-0) Answer yes.")
    researcher = annotator_client(make_user("researcher"))
    response = researcher.post(
        reverse("annotation:stage-action", args=[s.stage.pk, "guideline"]),
        {"text": "# v3\n\nLike pilot-1.", "change_note": ""},
    )
    assert response.status_code == 400 and "names the training item pilot-1" in response.content.decode()
    assert s.stage.guidelines.count() == 2

    # What a later recruit reads before their pilot (page and API) names no training item.
    recruit_user = make_user("annotator")
    enrol(s, recruit_user)
    recruit = annotator_client(recruit_user)
    bodies = [
        recruit.get(reverse("annotation:training-guideline", args=[s.stage.pk])).content.decode(),
        recruit.get(f"/api/annotation/training/{s.stage.pk}/guideline/").content.decode(),
    ]
    for body in bodies:
        assert "two parts is invalid" in body
        for item in s.pilot_items + s.qualification_items:
            assert item.external_id not in body


def test_only_norming_clarifications_are_pinned(make_user):
    s = build_stage(pilot=2)
    discussion = Thread.objects.create(stage=s.stage, item=s.main_items[0], kind=Thread.Kind.ADJUDICATION)
    comment = Comment.objects.create(thread=discussion, author=make_user("annotator"), body="I chose no here.")
    with pytest.raises(SetupError, match="norming"):
        comment_pin(comment=comment)


def test_a_worked_example_is_never_a_test_item_of_a_stage_asking_the_question(make_user):
    s = build_stage(pilot=2, qualification=10)
    later = stage_create(project=s.project, name="Crowd check", questions=[s.question])
    TrainingItem.objects.create(stage=later, item=s.main_items[0], phase=TrainingItem.Phase.QUALIFICATION)
    gold_label_set(item=s.main_items[0], question=s.question, value="yes", rationale="")
    for item in (s.main_items[0], s.qualification_items[0]):  # the other stage's test; this stage's own
        with pytest.raises(SetupError, match="cannot be an example"):
            worked_example_add(
                stage=s.stage, item=item, question=s.question, kind="clear_positive", value="yes", rationale="."
            )


def test_pilot_feedback_and_the_gate_result_show_gold_only_for_own_submitted_pilot_labels(make_user):
    s = build_stage(pilot=3, qualification=10)
    user = make_user("annotator")
    walk_to_decision(s, user)
    # A pilot item added after this annotator's pilot: its gold is not feedback on anything they labelled.
    added = Item.objects.create(project=s.project, external_id="pilot-late", payload={"text": "late"}, category="A")
    gold_label_set(item=added, question=s.question, value="no", rationale="GOLD-RATIONALE-late: added later")
    TrainingItem.objects.create(stage=s.stage, item=added, phase=TrainingItem.Phase.PILOT, position=9)
    Stage.objects.filter(pk=s.stage.pk).update(pilot_size=4)  # the pilot grows (not a pool to draw from)
    client = annotator_client(user)
    stage_pk = s.stage.pk
    # The pilot is open again, so its feedback is refused; the selector behind it skips the new item anyway.
    assert client.get(reverse("annotation:training-feedback", args=[stage_pk])).status_code == 403
    assert client.get(f"/api/annotation/training/{stage_pk}/feedback/").status_code == 403
    rows = pilot_feedback(Enrollment.objects.get(stage=s.stage, user=user))
    assert [row["item"].external_id for row in rows] == ["pilot-0", "pilot-1", "pilot-2"]
    assert "GOLD-RATIONALE-late" not in str(rows)
    # The gate's result: scores and reasons only, never a qualification item's gold or rationale.
    for body in (
        client.get(reverse("annotation:training-stage", args=[stage_pk])).content.decode(),
        client.get(f"/api/annotation/training/{stage_pk}/").content.decode(),
        client.get("/api/annotation/enrollments/").content.decode(),
    ):
        assert "GOLD-RATIONALE-qual" not in body
        assert not any(item.external_id in body for item in s.qualification_items)
