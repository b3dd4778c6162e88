"""Demographic design pages: the overview lists levels, names and templates; levels and names are editable."""

import pytest
from django.urls import reverse

from audits.models import DemographicLevel, NameCue
from audits.services.design import design_defaults_seed

pytestmark = pytest.mark.django_db


def test_overview_lists_the_design(researcher_client):
    design_defaults_seed()
    html = researcher_client.get(reverse("audits:design")).content.decode()
    assert "English is not my first language; at home we speak another language." in html
    assert "Lakisha" in html and "Hiroshi" in html
    assert "Judge rubric" in html


def test_seeding_twice_keeps_edits(researcher_client):
    design_defaults_seed()
    level = DemographicLevel.objects.get(key="immigrant")
    response = researcher_client.post(
        reverse("audits:level-edit", args=[level.pk]),
        {
            "dimension": level.dimension_id,
            "key": "immigrant",
            "label": "Immigrant",
            "persona_statement": "My family and I moved here from abroad two years ago.",
            "tutor_statement": "",
            "order": 1,
        },
    )
    assert response.status_code == 302
    assert design_defaults_seed() == {"dimensions": 0, "levels": 0, "names": 0, "templates": 0}
    assert DemographicLevel.objects.get(key="immigrant").persona_statement.startswith("My family and I moved")


def test_names_can_be_added_and_retired(researcher_client):
    response = researcher_client.post(
        reverse("audits:name-new"), {"name": "Aroha", "gender": "female", "ethnicity": "maori", "active": "on"}
    )
    assert response.status_code == 302
    name = NameCue.objects.get(name="Aroha")
    researcher_client.post(
        reverse("audits:name-edit", args=[name.pk]), {"name": "Aroha", "gender": "female", "ethnicity": "maori"}
    )
    name.refresh_from_db()
    assert name.active is False


def test_design_pages_are_for_researchers(annotator_client):
    for url in (reverse("audits:design"), reverse("audits:design-preview"), reverse("audits:level-new")):
        assert annotator_client.get(url).status_code == 403
