"""Norming: threads open on pilot items where annotators disagreed with each other or with gold; stage
annotators (after their pilot) and the moderator post; the moderator pins a clarification, and the next
guideline version carries it."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import Thread
from annotation.services.training import guideline_publish

from .training_setup import build_stage, enrol, label_all, through_examples

pytestmark = pytest.mark.django_db


def test_threads_comments_pins_and_the_next_guideline(make_user):
    s = build_stage(pilot=4, pilot_threshold=0.75)  # 3 of 4 passes: both see the pilot's gold and its threads
    first, second = make_user("annotator"), make_user("annotator")
    for user, values in ((first, ["yes", "no", "yes", "no"]), (second, ["yes", "yes", "yes", "no"])):
        enrollment = enrol(s, user)
        through_examples(s, enrollment)
        label_all(s, user, s.pilot_items, values, "pilot")
    # Gold is yes/no/yes/no: the second annotator disagrees with gold and with the first on item 1 only.
    threads = Thread.objects.filter(stage=s.stage, kind="norming")
    assert [t.item for t in threads] == [s.pilot_items[1]]
    assert threads.get().reason == "annotators disagreed"

    late = make_user("annotator")
    enrol(s, late)
    late_client = Client()
    late_client.force_login(late)
    thread = threads.get()
    assert late_client.get(reverse("annotation:thread", args=[thread.pk])).status_code == 403  # pilot not done

    annotator = Client()
    annotator.force_login(second)
    assert (
        annotator.post(
            reverse("annotation:thread", args=[thread.pk]), {"body": "Why is this one not valid?"}
        ).status_code
        == 302
    )

    moderator = Client()
    moderator.force_login(make_user("adjudicator"))
    assert "Open norming threads" in moderator.get(reverse("annotation:moderation")).content.decode()
    moderator.post(
        reverse("annotation:thread", args=[thread.pk]), {"body": "Two questions in one item make it invalid."}
    )
    reply = thread.comments.get(body__startswith="Two questions")
    assert annotator.post(reverse("annotation:comment-pin", args=[reply.pk])).status_code == 403
    assert moderator.post(reverse("annotation:comment-pin", args=[reply.pk]), {"pinned": "1"}).status_code == 302

    v2 = guideline_publish(stage=s.stage, text="# Guideline\n\nUpdated.")
    assert "Two questions in one item make it invalid." in v2.text
    reply.refresh_from_db()
    assert reply.included_in_guideline == v2
    v3 = guideline_publish(stage=s.stage, text="# Guideline\n\nAgain.")
    assert "Two questions" not in v3.text  # appended once; the stage page pre-fills the next text with it
