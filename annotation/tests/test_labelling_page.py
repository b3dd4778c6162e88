"""The labelling page and API: one item with every question and its keys, blind (no one else's answers),
justification required by the server, Unsure only where enabled, a double submit changes nothing, time
recorded, and a constant number of SQL queries per request whatever the number of items and labels."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment, Label, Phase

from .main_setup import answers, build_main_stage, pass_gate

pytestmark = pytest.mark.django_db

# The same bounds for a stage of 5 items / 3 labels and of 60 items / 45 labels: the count does not grow with
# them. Counted inside the test's transaction, so each request's own transaction shows as 2 SAVEPOINT lines.
# API next: 9 statements (auth, check, held, expired, same person? — a crowd recruit's possible duplicates —,
# lock, slot, insert, questions)
NEXT_QUERIES = 11
SUBMIT_QUERIES = 17  # API submit: 8, and 5 more when this submit completes the item and resolves it
# API next that finds nothing left: held, expired, same person?, lock, open?, "any item the rule took since?",
# then the rows looked at once more (lock, open?), since another request may have listed items meanwhile.
NOTHING_LEFT_QUERIES = 12
PAGE_QUERIES = 24  # the HTML page (session auth, messages, stage-wide progress, 4 for the recent items)


def test_the_page_shows_one_item_all_questions_and_the_keys(client, make_user):
    s = build_main_stage(items=3, overlap=2, questions=2, unsure=True)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    page = client.get(reverse("annotation:label", args=[s.stage.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Main item 0" in html and "Main item 1" not in html
    assert 'name="answer-q1"' in html and 'name="answer-q2"' in html
    assert 'data-key="1"' in html and 'data-key="u"' in html
    assert "js/annotation-label.js" in html and "data-active-time" in html


def test_labelling_is_blind(client, make_user):
    s = build_main_stage(items=1, overlap=2)
    first, second = make_user("annotator"), make_user("annotator")
    for user in (first, second):
        pass_gate(s.stage, user)
    client.force_login(first)
    client.get(reverse("annotation:label", args=[s.stage.pk]))
    client.post(
        reverse("annotation:label", args=[s.stage.pk]),
        {"item": s.items[0].pk, "answer-q1": "no", "justification-q1": "SECRET-JUSTIFICATION", "seconds": "9"},
    )
    client.force_login(second)
    page = client.get(reverse("annotation:label", args=[s.stage.pk])).content.decode()
    api = client.get(reverse("annotation-main-next", args=[s.stage.pk]))
    assert "Main item 0" in page and "SECRET-JUSTIFICATION" not in page
    assert " checked" not in page  # no answer is pre-selected from someone else's label
    assert set(api.json()) == {"assignment", "reserved_until", "item", "questions", "progress"}
    assert api.json()["item"]["id"] == s.items[0].pk
    assert "SECRET-JUSTIFICATION" not in api.content.decode()
    # Nor can the second annotator open the item's discussion before submitting (as if there were none).
    assert client.get(reverse("annotation:discussion", args=[s.stage.pk, s.items[0].pk])).status_code == 404


def test_submit_stores_answers_with_time_and_moves_on(client, make_user):
    s = build_main_stage(items=2, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    url = reverse("annotation:label", args=[s.stage.pk])
    client.get(url)
    response = client.post(url, {"item": s.items[0].pk, "answer-q1": "yes", "seconds": "41.5"})
    assert response.status_code == 302
    label = Label.objects.get()
    assert (label.value, label.seconds, label.phase, label.round) == ("yes", 41.5, Phase.MAIN, "pre")
    assert "Main item 1" in client.get(url).content.decode()


def test_a_value_that_needs_a_justification_is_refused_without_one(client, make_user):
    s = build_main_stage(items=1, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    url = reverse("annotation:label", args=[s.stage.pk])
    client.get(url)
    response = client.post(url, {"item": s.items[0].pk, "answer-q1": "no", "justification-q1": "  "})
    assert response.status_code == 400
    assert "needs a justification" in response.content.decode()
    assert not Label.objects.exists()
    api = client.post(
        reverse("annotation-main-submit", args=[s.stage.pk]),
        {"item": s.items[0].pk, "answers": {"q1": {"value": "no"}}},
        content_type="application/json",
    )
    assert api.status_code == 400 and "q1" in api.json()["answers"]


def test_unsure_is_refused_where_the_stage_does_not_offer_it(client, make_user):
    s = build_main_stage(items=1, overlap=2, unsure=False)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    client.get(reverse("annotation-main-next", args=[s.stage.pk]))
    api = client.post(
        reverse("annotation-main-submit", args=[s.stage.pk]),
        {"item": s.items[0].pk, "answers": {"q1": {"unsure": True}}},
        content_type="application/json",
    )
    assert api.status_code == 400
    assert not Label.objects.exists()


def test_a_double_submit_changes_nothing(client, make_user):
    s = build_main_stage(items=2, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    client.get(reverse("annotation-main-next", args=[s.stage.pk]))
    url = reverse("annotation-main-submit", args=[s.stage.pk])
    body = {"item": s.items[0].pk, "answers": {"q1": {"value": "yes"}}, "seconds": 5}
    assert client.post(url, body, content_type="application/json").status_code == 201
    changed = {"item": s.items[0].pk, "answers": {"q1": {"value": "no", "justification": "x"}}, "seconds": 99}
    again = client.post(url, changed, content_type="application/json")
    assert again.status_code == 200 and again.json()["created"] is False
    assert list(Label.objects.values_list("value", "seconds")) == [("yes", 5.0)]
    assert Assignment.objects.filter(annotator=user).count() == 1  # the second submit did not take an item


def test_an_annotator_who_has_not_passed_gets_403(client, make_user):
    s = build_main_stage(items=1)
    client.force_login(make_user("annotator"))
    assert client.get(reverse("annotation:label", args=[s.stage.pk])).status_code == 403
    assert client.get(reverse("annotation-main-next", args=[s.stage.pk])).status_code == 403


def test_when_nothing_is_left_the_page_says_so(client, make_user):
    s = build_main_stage(items=1, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    url = reverse("annotation:label", args=[s.stage.pk])
    client.get(url)
    client.post(url, {"item": s.items[0].pk, "answer-q1": "yes"})
    assert "Nothing left to label" in client.get(url).content.decode()
    assert client.get(reverse("annotation-main-next", args=[s.stage.pk])).status_code == 204


def _fill(s, users, rounds):
    from annotation.services.labelling import label_next, main_label_submit

    for _ in range(rounds):
        for user in users:
            assignment = label_next(annotator=user, stage=s.stage)
            if assignment is not None:
                main_label_submit(annotator=user, stage=s.stage, item=assignment.item, answers=answers(s, "yes"))


@pytest.mark.parametrize("items, rounds", [(5, 1), (60, 15)])
def test_queries_per_labelling_request_do_not_grow_with_items_and_labels(
    client, make_user, django_assert_max_num_queries, items, rounds
):
    s = build_main_stage(items=items, overlap=2)
    others = [make_user("annotator") for _ in range(3)]
    user = make_user("annotator")
    for who in [*others, user]:
        pass_gate(s.stage, who)
    _fill(s, others, rounds)  # 3 labels with 5 items; 45 labels with 60 items
    client.force_login(user)
    page_url = reverse("annotation:label", args=[s.stage.pk])
    next_url = reverse("annotation-main-next", args=[s.stage.pk])
    submit_url = reverse("annotation-main-submit", args=[s.stage.pk])
    client.get(page_url)  # the first request syncs the stage's items and the session
    for _ in range(2):
        with django_assert_max_num_queries(PAGE_QUERIES):
            response = client.get(page_url)
        assert response.status_code == 200
        with django_assert_max_num_queries(NEXT_QUERIES + 2):  # session auth: session and user rows
            item = client.get(next_url).json()["item"]["id"]
        with django_assert_max_num_queries(SUBMIT_QUERIES + 2):
            response = client.post(
                submit_url, {"item": item, "answers": {"q1": {"value": "yes"}}}, content_type="application/json"
            )
        assert response.status_code == 201
        item = client.get(next_url).json()["item"]["id"]
        with django_assert_max_num_queries(PAGE_QUERIES):
            response = client.post(page_url, {"item": item, "answer-q1": "yes"})
        assert response.status_code == 302
    # The API as the labelling clients use it, with a token: the user and roles come with the token.
    from knox.models import AuthToken

    client.logout()
    token = {"HTTP_AUTHORIZATION": f"Token {AuthToken.objects.create(user=user)[1]}"}
    submitted = 0
    for _ in range(3):  # with overlap 2 and others ahead, some of these submits complete an item
        with CaptureQueriesContext(connection) as queries:
            response = client.get(next_url, **token)
        if response.status_code == 204:  # the small stage is used up
            assert len(queries) <= NOTHING_LEFT_QUERIES
            break
        assert len(queries) <= NEXT_QUERIES
        item = response.json()["item"]["id"]
        with django_assert_max_num_queries(SUBMIT_QUERIES):
            response = client.post(
                submit_url,
                {"item": item, "answers": {"q1": {"value": "yes"}}},
                content_type="application/json",
                **token,
            )
        assert response.status_code == 201
        submitted += 1
    if items == 60:  # enough open items for every round
        assert submitted == 3


def test_the_api_says_503_with_retry_after_when_every_open_item_is_being_handed_out(client, make_user, monkeypatch):
    from annotation.api import views_labelling
    from annotation.services.assignment import AssignmentBusy

    def busy(**kwargs):
        raise AssignmentBusy("Every open item is being handed out to someone else right now; try again.")

    s = build_main_stage(items=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    monkeypatch.setattr(views_labelling, "label_next", busy)
    response = client.get(reverse("annotation-main-next", args=[s.stage.pk]))
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert "try again" in response.json()["detail"]
