"""Keys promised are keys that work (the home page and label form name u for Unsure only where a question offers
it), and annotators see an item's opening words, never its id (researchers still see the id)."""

import pytest
from django.urls import reverse

from annotation.templatetags.annotator_view import item_name
from annotation.workflow.choice_keys import keys_hint

from .main_setup import build_main_stage, pass_gate

YES_NO = [{"value": "yes", "key": "1"}, {"value": "no", "key": "2"}]


@pytest.mark.pure
def test_the_hint_names_only_the_keys_the_questions_take():
    assert keys_hint([{"choices": YES_NO, "allow_unsure": False}]) == "number keys (1, 2) choose, Enter submits"
    scale = [{"value": str(n), "key": str(n)} for n in range(3)] + [{"value": "__na__", "key": "n"}]
    assert keys_hint([{"choices": scale, "allow_unsure": True}]) == (
        "number keys (0–2) choose, u is Unsure, n is Not applicable, Enter submits"
    )


@pytest.mark.django_db
@pytest.mark.parametrize("unsure", [False, True])
def test_home_and_label_page_promise_u_only_with_an_unsure_option(client, make_user, unsure):
    s = build_main_stage(items=2, overlap=1, unsure=unsure)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    home = client.get(reverse("home")).content.decode()
    label = client.get(reverse("annotation:label", args=[s.stage.pk])).content.decode()
    assert "One item at a time; number keys (1, 2) choose" in home
    assert ("u is Unsure" in home) is unsure and ("u is Unsure" in label) is unsure


@pytest.mark.django_db
def test_annotators_see_the_opening_words_not_the_id(client, make_user, researcher):
    s = build_main_stage(items=1, overlap=1)
    item = s.items[0]
    item.external_id = "gold-041"
    item.save(update_fields=["external_id"])
    user = make_user("annotator")
    pass_gate(s.stage, user)
    assert item_name(item, user) == "“Main item 0”" and item_name(item, researcher) == "gold-041"

    client.force_login(user)
    label = reverse("annotation:label", args=[s.stage.pk])
    client.get(label)
    client.post(label, {"item": item.pk, "answer-q1": "yes", "seconds": "3"})
    page = client.get(label).content.decode()
    assert "My recent items" in page and "“Main item 0”" in page and "gold-041" not in page
