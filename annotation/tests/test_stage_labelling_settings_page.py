"""The stage page sets how main items are handed out (strategy, seed, reservation time): saved through
`stage_labelling_configure`, a bad value refused with the form's error and nothing changed, researchers only."""

import pytest
from django.urls import reverse

from annotation.models import Stage
from annotation.selectors.labelling_settings import labelling_settings

from .main_setup import build_main_stage

pytestmark = pytest.mark.django_db


def test_a_researcher_sets_the_strategy_seed_and_reservation_on_the_stage_page(researcher_client):
    s = build_main_stage(items=2)
    page = researcher_client.get(reverse("annotation:stage", args=[s.stage.pk])).content.decode()
    assert "data-labelling-settings" in page and 'value="order"' in page and 'value="30"' in page

    url = reverse("annotation:stage-action", args=[s.stage.pk, "labelling"])
    response = researcher_client.post(url, {"strategy": "random", "seed": "7", "reservation_minutes": "45"})
    assert response.status_code == 302
    settings = labelling_settings(Stage.objects.get(pk=s.stage.pk))
    assert (settings.strategy, settings.seed, settings.reservation_minutes) == ("random", 7, 45)


def test_a_reservation_under_a_minute_is_refused_and_nothing_changes(researcher_client):
    s = build_main_stage(items=2)
    url = reverse("annotation:stage-action", args=[s.stage.pk, "labelling"])
    response = researcher_client.post(url, {"strategy": "balanced", "seed": "1", "reservation_minutes": "0"})
    assert response.status_code == 400
    assert "greater than or equal to 1" in response.content.decode()
    settings = labelling_settings(Stage.objects.get(pk=s.stage.pk))
    assert settings.pk is None and settings.strategy == "order"  # still the defaults, nothing stored


def test_only_researchers_change_the_settings(client, make_user):
    s = build_main_stage(items=2)
    client.force_login(make_user("annotator"))
    url = reverse("annotation:stage-action", args=[s.stage.pk, "labelling"])
    assert client.post(url, {"strategy": "random", "seed": "7", "reservation_minutes": "45"}).status_code == 403
    assert labelling_settings(s.stage).pk is None
