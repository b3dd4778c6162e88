"""The launch form's preview says what it waits for — "Choose a student model and a judge to see the preview" —
on the page as served and on every refresh, instead of "Computing…" for ever; and the form asks the browser for no
validation, which would stop htmx from asking for the preview at all."""

import pytest
from django.urls import reverse

from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db

DESIGN = {"seed": 0, "control": "on", "explicit_dimensions": ["gender"], "t_max": 10, "max_reasks": 2}


def test_the_page_says_what_the_preview_needs(researcher_client):
    page = researcher_client.get(reverse("audits:audit-new")).content.decode()
    assert "Choose a student model and a judge to see the preview." in page
    assert "Computing the preview" not in page
    assert '<form method="post" class="preview-form" id="audit-form" novalidate' in page


@pytest.mark.parametrize(
    "chosen, message",
    [
        ((), "Choose a student model and a judge to see the preview."),
        (("student_endpoint",), "Choose a judge to see the preview."),
        (("judge_endpoint",), "Choose a student model to see the preview."),
    ],
)
def test_the_preview_names_the_missing_choice(researcher_client, chosen, message):
    make_questions(15)
    endpoint = simulation_endpoint("mc-endpoint")
    data = {**DESIGN, **{field: endpoint.pk for field in chosen}}
    response = researcher_client.post(reverse("audits:audit-new-preview"), data)
    html = response.content.decode()
    assert response.status_code == 200 and 'id="launch-preview-missing"' in html and message in html
    assert not response.context.get("preview") and "launch-preview-pending" not in html


def test_with_both_chosen_the_preview_shows_and_design_errors_still_show_beside_the_message(researcher_client):
    make_questions(15)
    endpoint, tutor = simulation_endpoint("mc-endpoint"), simulation_endpoint("mc-tutor")
    both = {**DESIGN, "student_endpoint": endpoint.pk, "judge_endpoint": endpoint.pk, "tutors": [tutor.pk]}
    response = researcher_client.post(reverse("audits:audit-new-preview"), both)
    assert response.context["preview"] and "launch-preview-missing" not in response.content.decode()
    html = researcher_client.post(reverse("audits:audit-new-preview"), {**DESIGN, "t_max": "many"}).content.decode()
    assert "Choose a student model and a judge" in html and "launch-preview-pending" in html
    assert "T_max (tutor turns):" in html and "Student endpoint:" not in html
