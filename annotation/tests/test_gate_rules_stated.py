"""The gate's rules are stated where they are applied: on the researcher's stage page, on the annotator's
training page and pilot feedback, in the training API and in the Appendix-D report (HTML, Markdown, JSON)
— "at least K of N correct, Unsure counts as not correct", and the pilot's threshold, Unsure rule and
coverage floor."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.reports import project_report, report_html, report_markdown

from .training_setup import build_stage, enrol, label_all, through_examples

pytestmark = pytest.mark.django_db

QUALIFICATION = "Qualification test: at least 8 of 10 correct, Unsure counts as not correct."
PILOT = (
    "Pilot (4 gold items): agreement with gold of at least 80%; Unsure answers are left out of the agreement, "
    "its coverage (answered / pilot items) is reported, and at least 70% of the pilot items must get a real answer."
)


def test_rules_on_the_pages_the_api_and_the_report(make_user):
    s = build_stage(pilot=4, qualification=10, unsure=True, unsure_rule="exclude", min_coverage=0.7)
    researcher, annotator = Client(), Client()
    researcher.force_login(make_user("researcher"))
    user = make_user("annotator")
    annotator.force_login(user)
    enrollment = enrol(s, user)
    through_examples(s, enrollment)
    # A pilot that passes (3 of 3 answered, coverage 0.75 ≥ 0.7): its feedback, with the rules, is shown.
    label_all(s, user, s.pilot_items, ["yes", "no", "yes", "unsure"], "pilot")
    stage_pk = s.stage.pk
    report = project_report(s.project)
    bodies = {
        "stage page": researcher.get(reverse("annotation:stage", args=[stage_pk])).content.decode(),
        "training page": annotator.get(reverse("annotation:training-stage", args=[stage_pk])).content.decode(),
        "pilot feedback": annotator.get(reverse("annotation:training-feedback", args=[stage_pk])).content.decode(),
        "report html": report_html(report),
        "report md": report_markdown(report),
    }
    for name, body in bodies.items():
        text = body.replace("&#x27;", "'").replace("&quot;", '"')
        assert QUALIFICATION in text, name
        assert PILOT in text, name
    # Scores are percentages, as the thresholds they are compared with ("at least 80%").
    assert "coverage (answered / pilot items) <strong data-pilot-coverage>75%" in bodies["pilot feedback"]
    assert "<strong>100%</strong> on the items you answered" in bodies["pilot feedback"]
    assert '<td class="num" data-pilot-score>100%</td>' in bodies["stage page"]
    state = annotator.get(f"/api/annotation/training/{stage_pk}/").json()
    assert state["gate"]["rules"]["qualification"] == QUALIFICATION
    assert report["gate"][0]["rules"]["pilot"] == PILOT and report["gate"][0]["min_coverage"] == 0.7
