"""Cloning an audit with its conditions changed: the audit page's clone form opens on the audit's own conditions
(the launch form's condition fields), and the page and the API make a clone with the conditions chosen."""

import re

import pytest
from django.urls import reverse

from audits.models import Audit
from audits.services.audit_lifecycle import audit_create_from_design
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def source():
    make_questions(3)
    tutor, other = simulation_endpoint("clone-tutor"), simulation_endpoint("clone-other")
    return audit_create_from_design(
        name="source",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        selection={"domains": ["mathematics"], "count": 2, "seed": 0},
        choice={"control": True, "explicit_dimensions": ["first_language"], "seed": 0},
    )


def condition_keys(audit: Audit) -> set[str]:
    return set(audit.conditions.values_list("key", flat=True))


def checked(page: str, name: str) -> list[str]:
    form = page[page.index('id="clone-form"') :]
    return re.findall(rf'<input type="checkbox" name="{name}" value="(\w+)"[^>]*checked', form)


def test_the_clone_form_opens_on_the_audits_own_conditions(researcher_client, source):
    page = researcher_client.get(reverse("audits:audit-detail", args=[source.pk])).content.decode()
    assert '<option value="conditions">Conditions</option>' in page
    assert checked(page, "explicit_dimensions") == ["first_language"]
    assert re.search(r'<input type="checkbox" name="control"[^>]*checked', page[page.index('id="clone-form"') :])


def test_a_clone_from_the_page_runs_the_conditions_chosen(researcher_client, source):
    response = researcher_client.post(
        reverse("audits:audit-clone", args=[source.pk]),
        {"factor": "conditions", "control": "on", "explicit_dimensions": ["first_language", "gender"]},
    )
    clone = Audit.objects.get(cloned_from=source)
    assert response.url == reverse("audits:audit-detail", args=[clone.pk])
    assert condition_keys(clone) > condition_keys(source)
    assert any(key.startswith("explicit/gender=") for key in condition_keys(clone))
    assert clone.design["explicit_dimensions"] == ["first_language", "gender"] and clone.seed == source.seed
    assert clone.clone_change.startswith("conditions → control, explicit first_language/gender")
    assert set(clone.questions.all()) == set(source.questions.all())
    assert list(clone.tutors.all()) == list(source.tutors.all())


def test_the_same_conditions_or_nothing_to_compare_make_no_clone(researcher_client, source):
    url = reverse("audits:audit-clone", args=[source.pk])
    same = researcher_client.post(
        url, {"factor": "conditions", "control": "on", "explicit_dimensions": ["first_language"]}, follow=True
    )
    assert "the audit&#x27;s own conditions" in same.content.decode()
    alone = researcher_client.post(url, {"factor": "conditions", "control": "on"}, follow=True)
    assert "nothing to compare" in alone.content.decode()
    assert not Audit.objects.filter(cloned_from=source).exists()


def test_a_clone_through_the_api_takes_the_condition_fields(researcher_client, source):
    url = f"/api/audits/{source.pk}/clone/"
    response = researcher_client.post(
        url,
        {"factor": "conditions", "value": {"explicit_dimensions": ["ses"], "control": False}},
        content_type="application/json",
    )
    assert response.status_code == 201
    clone = Audit.objects.get(pk=response.json()["id"])
    assert condition_keys(clone) and all(key.startswith("explicit/ses=") for key in condition_keys(clone))
    refused = researcher_client.post(
        url, {"factor": "conditions", "value": {"explicit": ["ses"]}}, content_type="application/json"
    )
    assert refused.status_code == 400 and "unknown condition field 'explicit'" in refused.json()["detail"]
