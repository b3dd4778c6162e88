"""Revising a submitted label: while the item still waits for its labels the change is a new version kept
with the old one, the item's resolution is decided on the final pre-discussion labels, and the report
counts the revised labels. Within the window a revision is accepted whatever the others did: once the item
has all its labels (settled, in discussion or waiting for a reviewer) it is held beside the blind labels,
not counted, with the same answer — so nothing an annotator sees of their own items changes when a
co-annotator submits. After the window it is refused (409 in the API). The rule itself
(`workflow.revision_rules`) is tested without a database at the end."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation import reports
from annotation.models import Adjudication, Assignment, HeldRevision, Label, LabelRevision, MainItem
from annotation.selectors.adjudication import discussion_visibility_for, item_side_by_side
from annotation.selectors.exports import export_records
from annotation.selectors.revisions import label_history, recent_items
from annotation.services.labelling import (
    RevisionRefused,
    label_next,
    label_revise,
    main_label_submit,
    stage_labelling_configure,
)
from annotation.workflow.revision_rules import (
    RevisionState,
    RevisionWindow,
    revision_counts,
    revision_refusal,
    window_statement,
)

from .main_setup import answers, build_main_stage, pass_gate


def _label(s, user, value, item=None):
    assignment = label_next(annotator=user, stage=s.stage)
    if item is not None:
        assert assignment.item_id == item.pk
    main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, value), seconds=20)
    return assignment.item


def _setup(make_user, *, policy="majority_reviewer", overlap=2, items=1):
    s = build_main_stage(items=items, overlap=overlap, policy=policy)
    s.users = [make_user("annotator") for _ in range(overlap)]
    for user in s.users:
        pass_gate(s.stage, user)
    return s


@pytest.mark.django_db
def test_revise_before_settling_keeps_history_the_resolution_reads_it_and_the_report_counts_it(make_user):
    s = _setup(make_user)
    item = _label(s, s.users[0], "no")
    result = label_revise(annotator=s.users[0], stage=s.stage, item=item, answers=answers(s, "yes"), seconds=5)
    assert result.revised == ("q1",)
    label_revise(annotator=s.users[0], stage=s.stage, item=item, answers=answers(s, "no"))
    label_revise(annotator=s.users[0], stage=s.stage, item=item, answers=answers(s, "yes"))
    same = label_revise(annotator=s.users[0], stage=s.stage, item=item, answers=answers(s, "yes"))
    assert same.revised == ()  # the same answers again: no new version

    label = Label.objects.get(assignment__annotator=s.users[0], assignment__item=item, round="pre")
    assert (label.value, label.justification) == ("yes", "")
    assert label.seconds == 25  # the revisit's active time is added to the item's
    history = label_history(label)
    assert [(v["version"], v["value"]) for v in history] == [(1, "no"), (2, "yes"), (3, "no"), (4, "yes")]
    assert history[0]["justification"] == "it is not, because …"
    assert history[0]["at"] == label.created_at
    assert history[1]["at"] == LabelRevision.objects.get(label=label, version=1).replaced_at
    assert MainItem.objects.get(stage=s.stage, item=item).status == MainItem.Status.LABELLING

    # The second label completes the item: it is resolved on the revised first label ("yes", not "no").
    _label(s, s.users[1], "yes", item=item)
    decision = Adjudication.objects.get(stage=s.stage, item=item)
    assert (decision.method, decision.final_value) == ("unanimous", "yes")

    report = reports.project_report(s.project)
    volume = report["stages"][0]["volume"]
    assert (volume["revised_labels"], volume["revisions"]) == (1, 3)
    assert volume["labels"] == 2  # a revision is not a new label
    pre = report["stages"][0]["agreement"][0]["groups"][0]["pre"]
    assert pre["fleiss_kappa"]["undefined_reason"]  # both "yes": one category, undefined (not 1)
    assert "1 (3 earlier versions kept)" in reports.report_markdown(report)
    assert "1 (3 earlier versions kept)" in reports.report_html(report)

    # The adjudicator's side-by-side view shows the revision count (annotators never see it of others).
    moderator = make_user("adjudicator")
    detail = item_side_by_side(
        stage=s.stage, item=item, visibility=discussion_visibility_for(user=moderator, stage=s.stage, item=item)
    )
    assert sorted(a["pre"]["revisions"] for a in detail["questions"][0]["answers"]) == [0, 3]
    # The label export counts each label's earlier versions, so a client can recount the report's revisions.
    exported = [row for row in export_records(s.project) if row["record"] == "label" and row["item_id"] == item.pk]
    assert sorted(row["revisions"] for row in exported) == [0, 3]

    # Settled now: a change within the window is accepted in the same words, held beside the blind label.
    held = label_revise(annotator=s.users[1], stage=s.stage, item=item, answers=answers(s, "no"))
    assert held.revised == ("q1",)
    assert LabelRevision.objects.count() == 3
    assert Label.objects.get(assignment__annotator=s.users[1], round="pre").value == "yes"  # what was resolved
    assert HeldRevision.objects.get().value == "no"
    assert Adjudication.objects.get(stage=s.stage, item=item).final_value == "yes"
    mine = recent_items(annotator=s.users[1], stage=s.stage)[0]["answers"][0]
    assert (mine["value"], mine["revisions"]) == ("no", 1)  # they see their latest answer, as for any revision


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("policy", "second", "status"),
    [
        ("majority_reviewer", "yes", MainItem.Status.RESOLVED),
        ("majority_reviewer", "no", MainItem.Status.REVIEWER_QUEUE),
        ("discussion_senior", "no", MainItem.Status.DISCUSSION),
    ],
)
def test_an_item_with_all_its_labels_takes_a_held_revision_whatever_its_outcome(make_user, policy, second, status):
    s = _setup(make_user, policy=policy)
    item = _label(s, s.users[0], "yes")
    _label(s, s.users[1], second, item=item)
    assert MainItem.objects.get(stage=s.stage, item=item).status == status
    before = list(Label.objects.filter(round="pre").order_by("pk").values_list("value", flat=True))
    for user, own in zip(s.users, ("yes", second), strict=True):
        changed_to = "no" if own == "yes" else "yes"
        result = label_revise(annotator=user, stage=s.stage, item=item, answers=answers(s, changed_to))
        assert result.revised == ("q1",)  # the same answer as a counted revision: it tells nothing
    assert not LabelRevision.objects.exists()
    assert HeldRevision.objects.count() == 2
    assert list(Label.objects.filter(round="pre").order_by("pk").values_list("value", flat=True)) == before
    assert MainItem.objects.get(stage=s.stage, item=item).status == status


@pytest.mark.django_db
def test_the_revision_window_refuses(make_user):
    s = _setup(make_user, items=3)
    first = _label(s, s.users[0], "yes")
    Assignment.objects.filter(annotator=s.users[0], item=first).update(
        submitted_at=timezone.now() - timedelta(minutes=61)
    )
    with pytest.raises(RevisionRefused, match="60 minutes"):
        label_revise(annotator=s.users[0], stage=s.stage, item=first, answers=answers(s, "no"))
    second = _label(s, s.users[0], "yes")
    stage_labelling_configure(stage=s.stage, revision_items=1)
    third = _label(s, s.users[0], "yes")
    with pytest.raises(RevisionRefused, match="last 1"):
        label_revise(annotator=s.users[0], stage=s.stage, item=second, answers=answers(s, "no"))
    stage_labelling_configure(stage=s.stage, revision_minutes=0)
    with pytest.raises(RevisionRefused, match="does not allow"):
        label_revise(annotator=s.users[0], stage=s.stage, item=third, answers=answers(s, "no"))
    assert not LabelRevision.objects.exists()


@pytest.mark.django_db
def test_recent_items_page_and_api(make_user, client):
    s = _setup(make_user, items=3)
    user = s.users[0]
    first = _label(s, user, "yes")
    _label(s, s.users[1], "yes", item=first)  # unanimous: settled
    second = _label(s, user, "no")
    rows = recent_items(annotator=user, stage=s.stage)
    assert [row["item"].pk for row in rows] == [second.pk, first.pk]
    assert [row["revisable"] for row in rows] == [True, True]  # settled or not: the window alone decides
    assert rows[1]["window"].startswith("Revisable for ") and "among your last 5 submitted items" in rows[1]["window"]

    client.force_login(user)
    api = client.get(reverse("annotation-main-recent", args=[s.stage.pk])).json()
    assert [(row["item"]["id"], row["revisable"]) for row in api] == [(second.pk, True), (first.pk, True)]
    assert set(api[0]) == {"item", "submitted_at", "revisable", "refusal", "window", "answers"}  # no resolution
    assert api[0]["answers"][0] == {
        "question": "q1",
        "value": "no",
        "unsure": False,
        "justification": "it is not, because …",
        "revisions": 0,
    }
    url = reverse("annotation-main-revise", args=[s.stage.pk, second.pk])
    body = {"answers": {"q1": {"value": "yes"}}, "seconds": 3}
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 200, response.content
    assert response.json() == {"assignment": response.json()["assignment"], "revised": ["q1"]}
    Assignment.objects.filter(annotator=user, item=first).update(submitted_at=timezone.now() - timedelta(minutes=61))
    refused = client.post(
        reverse("annotation-main-revise", args=[s.stage.pk, first.pk]),
        {"answers": {"q1": {"value": "no", "justification": "because"}}},
        content_type="application/json",
    )
    assert refused.status_code == 409 and "60 minutes" in refused.json()["detail"]
    invalid = client.post(url, {"answers": {"q1": {"value": "maybe"}}}, content_type="application/json")
    assert invalid.status_code == 400 and "q1" in invalid.json()["answers"]
    not_mine = client.post(
        reverse("annotation-main-revise", args=[s.stage.pk, s.items[2].pk]), body, content_type="application/json"
    )
    assert not_mine.status_code == 404

    # The page: the recent items on the labelling page, and the revision form.
    page = client.get(reverse("annotation:label", args=[s.stage.pk])).content.decode()
    assert reverse("annotation:revise", args=[s.stage.pk, second.pk]) in page
    form = client.get(reverse("annotation:revise", args=[s.stage.pk, second.pk]))
    assert form.status_code == 200
    assert re.search(r'name="answer-q1" value="yes"[^>]*checked', form.content.decode())  # the current answer
    posted = client.post(
        reverse("annotation:revise", args=[s.stage.pk, second.pk]),
        {"item": second.pk, "answer-q1": "no", "justification-q1": "on reflection, no", "seconds": "2"},
    )
    assert posted.status_code == 302
    assert Label.objects.get(assignment__annotator=user, assignment__item=second).value == "no"
    settled_form = client.post(
        reverse("annotation:revise", args=[s.stage.pk, first.pk]),
        {"item": first.pk, "answer-q1": "no", "justification-q1": "x", "seconds": "2"},
    )
    assert settled_form.status_code == 409 and "60 minutes" in settled_form.content.decode()


NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
WINDOW = RevisionWindow(minutes=30, items=2)


def state(**changes) -> RevisionState:
    base = {"submitted_at": NOW - timedelta(minutes=5), "recent_rank": 0}
    return RevisionState(**(base | changes))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({}, None),
        ({"submitted_at": NOW - timedelta(minutes=31)}, "30 minutes"),
        ({"submitted_at": NOW - timedelta(minutes=30)}, None),
        ({"recent_rank": 2}, "last 2"),
        ({"recent_rank": 1}, None),
    ],
)
def test_revision_rule(changes, reason):
    refusal = revision_refusal(state(**changes), WINDOW, now=NOW)
    if reason is None:
        assert refusal is None
    else:
        assert reason in refusal


def test_the_window_is_stated_in_time_and_position_and_a_revision_counts_until_resolution_starts():
    assert window_statement(state(), WINDOW, now=NOW) == (
        "Revisable for 25 more minutes, while it is among your last 2 submitted items."
    )
    assert "30 minutes" in window_statement(state(submitted_at=NOW - timedelta(minutes=31)), WINDOW, now=NOW)
    assert revision_counts(resolution_started=False) and not revision_counts(resolution_started=True)


def test_a_closed_window_refuses_everything():
    assert "does not allow" in revision_refusal(state(), RevisionWindow(minutes=0, items=5), now=NOW)
    assert "does not allow" in revision_refusal(state(), RevisionWindow(minutes=30, items=0), now=NOW)


@pytest.mark.django_db
def test_the_revision_window_is_a_stage_setting_on_the_page_and_the_api(researcher_client):
    s = build_main_stage(items=1, overlap=2)
    page = researcher_client.post(
        reverse("annotation:stage-action", args=[s.stage.pk, "labelling"]),
        {
            "strategy": "order",
            "seed": "0",
            "reservation_minutes": "30",
            "revision_minutes": "15",
            "revision_items": "3",
        },
    )
    assert page.status_code == 302
    api_url = reverse("annotation-main-settings", args=[s.stage.pk])
    assert researcher_client.get(api_url).json() == {
        "strategy": "order",
        "seed": 0,
        "reservation_minutes": 30,
        "revision_minutes": 15,
        "revision_items": 3,
        "pilot_feedback": "passed",
        "pilot_closed": False,
    }
    changed = researcher_client.put(api_url, {"revision_items": 0}, content_type="application/json")
    assert changed.status_code == 200 and changed.json()["revision_items"] == 0
    refused = researcher_client.put(api_url, {"revision_items": 101}, content_type="application/json")
    assert refused.status_code == 400 and "100" in str(refused.json())


@pytest.mark.django_db
def test_what_an_annotator_sees_of_their_item_does_not_change_when_a_co_annotator_submits(make_user, client):
    s = _setup(make_user, policy="discussion_senior", items=2)
    me, other = s.users
    item = _label(s, me, "yes")
    client.force_login(me)
    recent_url = reverse("annotation-main-recent", args=[s.stage.pk])
    revise_url = reverse("annotation-main-revise", args=[s.stage.pk, item.pk])

    def seen():
        rows = client.get(recent_url).json()
        page = client.get(reverse("annotation:label", args=[s.stage.pk])).content.decode()
        window = re.search(r"data-revision-window>([^<]*)<", page).group(1)
        return [{k: v for k, v in row.items() if k != "submitted_at"} for row in rows], window

    def revise(value):
        body = {"answers": {"q1": {"value": value, "justification": "because" if value == "no" else ""}}}
        response = client.post(revise_url, body, content_type="application/json")
        return response.status_code, {k: v for k, v in response.json().items() if k != "assignment"}

    alone = seen()
    first_revision = revise("no")
    _label(s, other, "yes", item=item)  # the co-annotator completes the item: it disagrees, a discussion opens
    assert MainItem.objects.get(stage=s.stage, item=item).status == MainItem.Status.DISCUSSION
    after = seen()
    # The same list and window text, save the answer I revised myself (no → shown as my latest answer).
    assert [r["revisable"] for r in after[0]] == [r["revisable"] for r in alone[0]] == [True]
    assert after[0][0]["refusal"] == alone[0][0]["refusal"] == ""
    assert after[0][0]["window"] == alone[0][0]["window"] and after[1] == alone[1]
    assert after[0][0]["answers"][0]["value"] == "no"
    second_revision = revise("yes")
    assert first_revision == second_revision == (200, {"revised": ["q1"]})
    assert client.get(recent_url).json()[0]["answers"][0]["value"] == "yes"  # my latest, as ever
    assert Label.objects.get(assignment__annotator=me, round="pre").value == "no"  # the blind label, read once
