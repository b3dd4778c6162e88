"""What a REST client needs around disagreements: an annotator's list of their disputed items (thread id,
open or closed, whether they answered after the discussion; the labelling page lists the open ones from the same
selector), the thread id in every discussion answer, the adjudicators' list of discussion threads, and project /
stage filters on the adjudication queue (400 naming a malformed id, 404 for an unknown one). "No item" is 204 on
every next-item endpoint."""

import pytest
from django.urls import reverse

from annotation.models import Thread
from annotation.services.labelling import label_next, main_label_submit

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db


def _disputed(make_user, *, project=None, order=None, policy="discussion_senior"):
    s = build_main_stage(items=2, overlap=2, policy=policy, project=project, order=order)
    s.users = [make_user("annotator") for _ in range(2)]
    for user, values in zip(s.users, (("yes", "yes"), ("no", "yes")), strict=True):
        pass_gate(s.stage, user)
        for value in values:
            assignment = label_next(annotator=user, stage=s.stage)
            main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, value))
    s.item = s.items[0]  # disputed; the second item is unanimous
    return s


def test_my_disputed_items_and_the_thread_id_in_the_discussion(make_user, client):
    s = _disputed(make_user)
    thread = Thread.objects.get(stage=s.stage, item=s.item, kind=Thread.Kind.ADJUDICATION)
    client.force_login(s.users[0])
    rows = client.get(reverse("annotation-main-disputed")).json()
    assert rows == [
        {
            "stage": s.stage.pk,
            "item": s.item.pk,
            "external_id": s.item.external_id,
            "thread": thread.pk,
            "open": True,
            "status": "discussion",
            "reason": thread.reason,
            "answered": False,
        }
    ]
    # The labelling page lists the same open discussion (one selector for both doors).
    page_url = reverse("annotation:my-labelling")
    page_link = reverse("annotation:discussion", args=[s.stage.pk, s.item.pk])
    assert [t.pk for t in client.get(page_url).context["discussions"]] == [thread.pk]
    assert f'href="{page_link}"' in client.get(page_url).content.decode()
    discussion_url = reverse("annotation-main-discussion", args=[s.stage.pk, s.item.pk])
    assert client.get(discussion_url).json()["discussion"]["thread"] == thread.pk
    after = client.post(
        discussion_url, {"answers": {"q1": {"value": "yes"}}, "comment": "I agree"}, content_type="application/json"
    )
    assert after.status_code == 200 and after.json()["discussion"]["thread"] == thread.pk
    assert client.get(reverse("annotation-main-disputed")).json()[0]["answered"] is True
    # The thread id leads to its comments.
    comments = client.get(reverse("annotation-thread-comments", args=[thread.pk])).json()
    assert [c["body"] for c in comments] == ["I agree"]
    # The other annotator closes it with the last answer: the response still names the thread.
    client.force_login(s.users[1])
    closed = client.post(discussion_url, {"answers": {"q1": {"value": "yes"}}}, content_type="application/json")
    assert closed.json()["discussion"] == {"thread": thread.pk, "open": False}
    row = client.get(reverse("annotation-main-disputed")).json()[0]
    assert (row["open"], row["status"]) == (False, "resolved")
    assert client.get(page_url).context["discussions"] == []  # the page lists open discussions only
    # Someone who labelled nothing there has no disputed items, and ?stage= filters.
    client.force_login(make_user("annotator"))
    assert client.get(reverse("annotation-main-disputed")).json() == []
    client.force_login(s.users[1])
    assert client.get(reverse("annotation-main-disputed") + f"?stage={s.stage.pk + 1000}").status_code == 404
    assert client.get(reverse("annotation-main-disputed") + "?stage=-1").status_code == 400


def test_threads_list_and_queue_filters(make_user, adjudicator, client):
    first = _disputed(make_user)
    second = _disputed(make_user, project=first.project, order=2)
    other = _disputed(make_user, policy="majority_reviewer")  # no discussion: the reviewer queue
    client.force_login(adjudicator)
    threads = client.get(reverse("annotation-adjudication-threads")).json()
    assert [(t["stage"], t["item"], t["open"], t["comments"]) for t in threads] == [
        (first.stage.pk, first.item.pk, True, 0),
        (second.stage.pk, second.item.pk, True, 0),
    ]
    assert threads[0]["project"] == first.project.pk and threads[0]["status"] == "discussion"
    by_stage = client.get(reverse("annotation-adjudication-threads") + f"?stage={second.stage.pk}").json()
    assert [t["stage"] for t in by_stage] == [second.stage.pk]
    assert client.get(reverse("annotation-adjudication-threads") + "?open=false").json() == []
    assert client.get(reverse("annotation-adjudication-threads") + "?open=maybe").status_code == 400

    queue_url = reverse("annotation-adjudication")
    everything = client.get(queue_url).json()
    assert {(row["stage"], row["item"]) for row in everything} == {
        (first.stage.pk, first.item.pk),
        (second.stage.pk, second.item.pk),
        (other.stage.pk, other.item.pk),
    }
    assert {row["thread"] is None for row in everything if row["stage"] == other.stage.pk} == {True}
    project_rows = client.get(queue_url + f"?project={first.project.pk}").json()
    assert {row["project"] for row in project_rows} == {first.project.pk} and len(project_rows) == 2
    stage_rows = client.get(queue_url + f"?stage={other.stage.pk}").json()
    assert [(row["stage"], row["status"]) for row in stage_rows] == [(other.stage.pk, "reviewer_queue")]
    bad = client.get(queue_url + "?project=abc")
    assert bad.status_code == 400 and "project" in str(bad.json())
    assert client.get(queue_url + "?stage=99999999").status_code == 404
    assert client.get(queue_url + "?project=99999999999999999999999").status_code == 400


def test_no_item_is_204_on_every_next_item_endpoint(make_user, client):
    s = build_main_stage(items=1, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    main_label_submit(
        annotator=user, stage=s.stage, item=label_next(annotator=user, stage=s.stage).item, answers=answers(s, "yes")
    )
    response = client.get(reverse("annotation-main-next", args=[s.stage.pk]))
    assert response.status_code == 204 and response.content == b""


def test_the_queue_page_filters_by_project_and_stage(make_user, adjudicator, client):
    first = _disputed(make_user)
    other = _disputed(make_user, policy="majority_reviewer")
    client.force_login(adjudicator)
    url = reverse("annotation:adjudicate")
    both = client.get(url).content.decode()
    assert first.item.external_id in both and first.project.name in both and other.project.name in both
    only = client.get(url + f"?project={other.project.pk}").content.decode()
    assert reverse("annotation:adjudicate-item", args=[other.stage.pk, other.item.pk]) in only
    assert reverse("annotation:adjudicate-item", args=[first.stage.pk, first.item.pk]) not in only
    staged = client.get(url + f"?stage={first.stage.pk}").content.decode()
    assert reverse("annotation:adjudicate-item", args=[first.stage.pk, first.item.pk]) in staged
    assert reverse("annotation:adjudicate-item", args=[other.stage.pk, other.item.pk]) not in staged
    assert client.get(url + "?stage=x").status_code == 400
    assert client.get(url + "?project=99999999").status_code == 404
