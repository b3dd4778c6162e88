"""A researcher sets a stage's item rule on the stage page and through the stage API; a rule naming an unknown
or a later stage, values not among the question's choices, or items not in the project is refused with a
message saying which, and nothing is stored. The SafeTutors preset sets stage 2 to stage 1's valid items."""

import pytest
from django.urls import reverse

from annotation.models import StageLabelling
from annotation.selectors.labelling_settings import labelling_settings
from annotation.services.projects import project_create

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db


@pytest.fixture
def two():
    first = build_main_stage(items=4, order=1)
    second = build_main_stage(project=first.project, order=2)
    return first, second


def _api(stage):
    return f"/api/annotation/stages/{stage.pk}/"


def test_the_api_reads_and_sets_the_rule(researcher_client, two):
    first, second = two
    body = researcher_client.get(_api(second.stage)).json()["main_items"]
    assert body["rule"] == "all" and body["description"] == "All the project's items."
    rule = {"rule": "settled", "source_stage": first.stage.pk, "source_values": ["yes"]}
    response = researcher_client.patch(_api(second.stage), {"main_items": rule}, content_type="application/json")
    assert response.status_code == 200, response.content
    body = response.json()["main_items"]
    assert (body["rule"], body["source_stage"], body["source_values"]) == ("settled", first.stage.pk, ["yes"])
    assert body["source_question"] == first.questions[0].pk and "stage 1" in body["description"]
    items = [first.items[2].pk, first.items[0].pk]
    response = researcher_client.patch(
        _api(first.stage), {"main_items": {"rule": "list", "item_ids": items}}, content_type="application/json"
    )
    assert response.json()["main_items"]["item_ids"] == items


@pytest.mark.parametrize(
    "rule, field, message",
    [
        ({"rule": "settled", "source_stage": 99999, "source_values": ["yes"]}, "source_stage", "There is no stage"),
        ({"rule": "settled", "source_stage": "SECOND", "source_values": ["yes"]}, "source_stage", "not earlier"),
        ({"rule": "settled", "source_stage": "FIRST", "source_values": ["maybe"]}, "source_values", "maybe"),
        ({"rule": "list", "item_ids": [99999]}, "item_ids", "No such items in this project: 99999"),
    ],
)
def test_the_api_refuses_a_wrong_rule_and_says_why(researcher_client, two, rule, field, message):
    first, second = two
    named = {"FIRST": first.stage.pk, "SECOND": second.stage.pk}
    rule = {k: named.get(v, v) if isinstance(v, str) else v for k, v in rule.items()}
    target = first.stage if rule.get("source_stage") == second.stage.pk else second.stage
    response = researcher_client.patch(_api(target), {"main_items": rule}, content_type="application/json")
    assert response.status_code == 400
    assert message in response.json()["main_items"][field]
    assert not StageLabelling.objects.filter(stage=target).exists()


def test_the_stage_page_sets_the_rule_and_shows_errors(researcher_client, two):
    first, second = two
    url = reverse("annotation:stage-action", args=[second.stage.pk, "items"])
    page = researcher_client.get(reverse("annotation:stage", args=[second.stage.pk])).content.decode()
    assert "data-item-rule-form" in page and "All the project&#x27;s items." in page

    refused = researcher_client.post(url, {"rule": "settled", "source_stage": first.stage.pk, "source_values": "no, x"})
    assert refused.status_code == 400 and "Not among the question&#x27;s choices: x" in refused.content.decode()
    refused = researcher_client.post(url, {"rule": "list", "items": "item-1 nope"})
    assert refused.status_code == 400 and "No such items in this project: nope" in refused.content.decode()
    assert labelling_settings(second.stage).pk is None

    assert researcher_client.post(url, {"rule": "list", "items": "item-3\nitem-1"}).status_code == 302
    settings = labelling_settings(type(second.stage).objects.get(pk=second.stage.pk))
    assert settings.item_ids == [first.items[3].pk, first.items[1].pk]
    page = researcher_client.get(reverse("annotation:stage", args=[second.stage.pk])).content.decode()
    assert "An explicit list of 2 items." in page and "item-3\nitem-1" in page


def test_the_safetutors_preset_chains_the_stages():
    stages = list(project_create(name="ST", preset="safetutors").stages.order_by("order"))
    rules = [labelling_settings(stage) for stage in stages]
    assert rules[0].item_rule == "all"
    assert (rules[1].item_rule, rules[1].source_stage_id, rules[1].source_values) == (
        "settled",
        stages[0].pk,
        ["valid"],
    )
    assert (rules[2].source_stage_id, rules[2].source_values) == (stages[1].pk, ["aligned", "misaligned"])
