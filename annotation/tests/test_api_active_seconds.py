"""Reported active time is stored only as a finite number of seconds (0 to 4 hours): NaN or infinity from a
client counts as 0 instead of reaching the report's hours and spend: one rule
(`workflow.answers.active_seconds`) for every door. The API's JSON parser refuses NaN before that (400)."""

import math

import pytest
from django.urls import reverse

from annotation.models import Label
from annotation.services.labelling import label_next
from annotation.workflow.answers import MAX_SECONDS_PER_ITEM, active_seconds

from .main_setup import build_main_stage, pass_gate


@pytest.mark.parametrize(
    ("raw", "stored"),
    [
        (12.5, 12.5),
        ("30", 30.0),
        (None, 0.0),
        (-4, 0.0),
        (float("nan"), 0.0),
        ("nan", 0.0),
        (float("inf"), 0.0),
        ("-inf", 0.0),
        ("ten", 0.0),
        (10**9, MAX_SECONDS_PER_ITEM),
    ],
)
def test_active_seconds(raw, stored):
    assert active_seconds(raw) == stored


@pytest.mark.django_db
def test_not_finite_seconds_through_the_api_and_the_page(make_user, client):
    s = build_main_stage(items=2, overlap=2)
    user = make_user("annotator")
    pass_gate(s.stage, user)
    client.force_login(user)
    item = label_next(annotator=user, stage=s.stage).item
    body = f'{{"item": {item.pk}, "answers": {{"q1": {{"value": "yes"}}}}, "seconds": NaN}}'
    response = client.post(reverse("annotation-main-submit", args=[s.stage.pk]), body, content_type="application/json")
    assert response.status_code == 400  # the API's JSON parser refuses NaN outright, with a message
    assert "NaN" in response.json()["detail"]
    assert not Label.objects.filter(assignment__item=item).exists()
    second = label_next(annotator=user, stage=s.stage).item
    page = client.post(
        reverse("annotation:label", args=[s.stage.pk]), {"item": second.pk, "answer-q1": "yes", "seconds": "inf"}
    )
    assert page.status_code == 302
    stored = Label.objects.get(assignment__item=second).seconds
    assert math.isfinite(stored) and stored == 0.0
