"""The discussion and adjudicator pages over HTTP: once both labels of a disputed item are in, its annotators
see the disputed answers side by side, comment, and give a post-discussion answer; outsiders get 404 (as
if there were no discussion); an adjudicator closes the discussion and decides from the queue; the nav and
home page point annotators to "Label" and adjudicators to "Adjudicate"."""

import pytest
from django.urls import reverse

from annotation.models import Comment, Label, MainItem

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db


@pytest.fixture
def disputed(make_user):
    from annotation.services.labelling import label_next, main_label_submit

    s = build_main_stage(items=1, overlap=2, policy="discussion_senior")
    s.users = [make_user("annotator") for _ in range(2)]
    for user, value in zip(s.users, ["yes", "no"], strict=True):
        pass_gate(s.stage, user)
        item = label_next(annotator=user, stage=s.stage).item
        main_label_submit(annotator=user, stage=s.stage, item=item, answers=answers(s, value))
    s.item = s.items[0]
    s.url = reverse("annotation:discussion", args=[s.stage.pk, s.item.pk])
    return s


def test_annotators_of_the_item_discuss_and_revise(client, disputed):
    client.force_login(disputed.users[0])
    page = client.get(disputed.url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "it is not, because" in body  # the other annotator's justification, now that both submitted
    assert 'name="answer-q1"' in body
    client.post(disputed.url, {"comment": "I read it as valid because the data are given."})
    assert Comment.objects.get().author == disputed.users[0]
    response = client.post(disputed.url, {"answer-q1": "no", "justification-q1": "Convinced: a premise is wrong."})
    assert response.status_code == 302
    assert Label.objects.filter(round="post").count() == 1
    assert Label.objects.filter(round="pre").count() == 2


def test_outsiders_cannot_open_the_discussion(client, make_user, disputed):
    client.force_login(make_user("annotator"))
    assert client.get(disputed.url).status_code == 404
    api = client.get(reverse("annotation-main-discussion", args=[disputed.stage.pk, disputed.item.pk]))
    assert api.status_code == 404


def test_adjudicator_closes_and_decides_from_the_queue(client, adjudicator, disputed):
    client.force_login(adjudicator)
    queue = client.get(reverse("annotation:adjudicate")).content.decode()
    assert disputed.item.external_id in queue
    item_url = reverse("annotation:adjudicate-item", args=[disputed.stage.pk, disputed.item.pk])
    client.post(item_url, {"action": "close"})
    assert MainItem.objects.get(item=disputed.item).status == MainItem.Status.SENIOR_REVIEW
    refused = client.post(item_url, {"answer-q1": "no", "note": ""})
    assert refused.status_code == 400
    client.post(item_url, {"answer-q1": "no", "note": "A premise is wrong."})
    assert MainItem.objects.get(item=disputed.item).status == MainItem.Status.RESOLVED
    assert "Nothing is waiting" in client.get(reverse("annotation:adjudicate")).content.decode()


def test_annotators_cannot_adjudicate(client, disputed):
    client.force_login(disputed.users[0])
    assert client.get(reverse("annotation:adjudicate")).status_code == 403
    api = client.post(
        reverse("annotation-adjudication-item", args=[disputed.stage.pk, disputed.item.pk]),
        {"decisions": {"q1": "yes"}, "note": "mine"},
        content_type="application/json",
    )
    assert api.status_code == 403


def test_nav_and_home_point_to_labelling_and_adjudication(client, adjudicator, disputed):
    client.force_login(disputed.users[0])
    home = client.get(reverse("home")).content.decode()
    assert reverse("annotation:my-labelling") in home and "Label items" in home
    client.force_login(adjudicator)
    home = client.get(reverse("home")).content.decode()
    assert reverse("annotation:adjudicate") in home and "Adjudicate 1 item" in home


def test_the_last_answer_closes_the_discussion_and_hides_it(client, disputed):
    for user in disputed.users:
        client.force_login(user)
        response = client.post(disputed.url, {"answer-q1": "no", "justification-q1": "Agreed: a premise is wrong."})
    assert response.status_code == 302 and response["Location"] == reverse("annotation:my-labelling")
    assert MainItem.objects.get(item=disputed.item).status == MainItem.Status.RESOLVED
    assert client.get(disputed.url).status_code == 404  # settled: blind again
    assert disputed.url not in client.get(reverse("annotation:my-labelling")).content.decode()
