"""Acceptance 3: every resolution path through the database — unanimous, discussion fixes it, the senior
decides what the discussion left, majority, no majority → reviewer queue → reviewer — and each records
method, final value, who and note. Post-discussion answers are kept apart from the first ones."""

import pytest

from annotation.models import Adjudication, Label, MainItem, Thread
from annotation.services.adjudication import adjudication_decide, discussion_answers_submit, discussion_close
from annotation.services.labelling import label_next, main_label_submit
from annotation.services.resolution import ResolutionRefused

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db


def setup(make_user, *, policy, overlap, values, questions=1):
    s = build_main_stage(items=1, overlap=overlap, policy=policy, questions=questions)
    users = [make_user("annotator") for _ in values]
    for user, value in zip(users, values, strict=True):
        pass_gate(s.stage, user)
        assignment = label_next(annotator=user, stage=s.stage)
        main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, value), seconds=30)
    s.users = users
    s.item = s.items[0]
    return s


def status(s):
    return MainItem.objects.get(stage=s.stage, item=s.item).status


def decision(s):
    return Adjudication.objects.get(stage=s.stage, item=s.item)


def test_unanimous_labels_resolve_at_once(make_user):
    s = setup(make_user, policy="discussion_senior", overlap=2, values=["yes", "yes"])
    assert status(s) == MainItem.Status.RESOLVED
    d = decision(s)
    assert (d.method, d.final_value, d.decided_by) == ("unanimous", "yes", None)
    assert d.note
    assert not Thread.objects.exists()


def test_nothing_is_decided_before_the_item_has_its_labels(make_user):
    s = setup(make_user, policy="majority_reviewer", overlap=3, values=["yes", "yes"])
    assert status(s) == MainItem.Status.LABELLING
    assert not Adjudication.objects.exists()


def test_discussion_that_reaches_agreement_settles_it(make_user):
    s = setup(make_user, policy="discussion_senior", overlap=2, values=["yes", "no"])
    assert status(s) == MainItem.Status.DISCUSSION
    thread = Thread.objects.get(stage=s.stage, item=s.item, kind=Thread.Kind.ADJUDICATION)
    assert thread.is_open and "q1" in thread.reason

    discussion_answers_submit(stage=s.stage, item=s.item, annotator=s.users[0], answers=answers(s, "no"))
    assert status(s) == MainItem.Status.DISCUSSION  # still waiting for the second annotator
    discussion_answers_submit(stage=s.stage, item=s.item, annotator=s.users[1], answers=answers(s, "no"))

    assert status(s) == MainItem.Status.RESOLVED
    d = decision(s)
    assert (d.method, d.final_value) == ("discussion", "no")
    thread.refresh_from_db()
    assert not thread.is_open
    # First answers are untouched; post-discussion answers sit beside them.
    rounds = sorted(Label.objects.filter(assignment__item=s.item).values_list("round", "value"))
    assert rounds == [("post", "no"), ("post", "no"), ("pre", "no"), ("pre", "yes")]


def test_the_senior_reviewer_decides_what_the_discussion_left(make_user, adjudicator):
    s = setup(make_user, policy="discussion_senior", overlap=2, values=["yes", "no"])
    discussion_answers_submit(stage=s.stage, item=s.item, annotator=s.users[0], answers=answers(s, "yes"))
    discussion_answers_submit(stage=s.stage, item=s.item, annotator=s.users[1], answers=answers(s, "no"))
    assert status(s) == MainItem.Status.SENIOR_REVIEW

    with pytest.raises(ResolutionRefused):
        adjudication_decide(stage=s.stage, item=s.item, decisions={"q1": "no"}, note="", by=adjudicator)
    adjudication_decide(
        stage=s.stage, item=s.item, decisions={"q1": "no"}, note="The premise is wrong.", by=adjudicator
    )
    assert status(s) == MainItem.Status.RESOLVED
    d = decision(s)
    assert (d.method, d.final_value, d.decided_by, d.note) == ("senior", "no", adjudicator, "The premise is wrong.")


def test_an_adjudicator_can_close_a_discussion_early(make_user, adjudicator):
    s = setup(make_user, policy="discussion_senior", overlap=2, values=["yes", "no"])
    discussion_close(stage=s.stage, item=s.item)  # nobody revised: the disagreement stands
    assert status(s) == MainItem.Status.SENIOR_REVIEW
    adjudication_decide(stage=s.stage, item=s.item, decisions={"q1": "yes"}, note="Fine as is.", by=adjudicator)
    assert decision(s).method == "senior"


def test_majority_wins(make_user):
    s = setup(make_user, policy="majority_reviewer", overlap=3, values=["yes", "no", "yes"])
    assert status(s) == MainItem.Status.RESOLVED
    d = decision(s)
    assert (d.method, d.final_value) == ("majority", "yes")


def test_no_majority_goes_to_the_reviewer_queue(make_user, adjudicator):
    s = build_main_stage(items=1, overlap=3, policy="majority_reviewer", unsure=True)
    users = [make_user("annotator") for _ in range(3)]
    for user, (value, unsure) in zip(users, [("yes", False), ("no", False), ("", True)], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value, unsure=unsure))
    item = s.items[0]
    assert MainItem.objects.get(stage=s.stage, item=item).status == MainItem.Status.REVIEWER_QUEUE
    assert not Adjudication.objects.exists()
    assert not Thread.objects.exists()  # the majority policy has no discussion

    with pytest.raises(ResolutionRefused):
        adjudication_decide(stage=s.stage, item=item, decisions={"q1": "maybe"}, note="x", by=adjudicator)
    adjudication_decide(stage=s.stage, item=item, decisions={"q1": "yes"}, note="Clear on reading.", by=adjudicator)
    d = Adjudication.objects.get()
    assert (d.method, d.final_value, d.decided_by) == ("senior", "yes", adjudicator)
    assert MainItem.objects.get(stage=s.stage, item=item).status == MainItem.Status.RESOLVED


def test_questions_settle_one_by_one(make_user, adjudicator):
    s = build_main_stage(items=1, overlap=2, policy="discussion_senior", questions=2)
    users = [make_user("annotator") for _ in range(2)]
    for user, second in zip(users, ["yes", "no"], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        given = answers(s, "yes")
        given["q2"] = answers(s, second)["q2"]
        main_label_submit(annotator=user, stage=s.stage, item=item, answers=given)
    item = s.items[0]
    # q1 was unanimous and is settled; only q2 is discussed and then decided.
    assert list(Adjudication.objects.values_list("question__key", "method")) == [("q1", "unanimous")]
    adjudication_decide(stage=s.stage, item=item, decisions={"q2": "no"}, note="Reason.", by=adjudicator)
    assert sorted(Adjudication.objects.values_list("question__key", "method")) == [
        ("q1", "unanimous"),
        ("q2", "senior"),
    ]


def test_only_the_items_annotators_revise_in_its_discussion(make_user):
    s = setup(make_user, policy="discussion_senior", overlap=2, values=["yes", "no"])
    outsider = make_user("annotator")
    with pytest.raises(ResolutionRefused):
        discussion_answers_submit(stage=s.stage, item=s.item, annotator=outsider, answers=answers(s, "no"))
