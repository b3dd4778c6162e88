"""The researcher's thresholds: saved for every validation of the project (they share the human labels),
within the model's bounds — human α in [-1, 1] (α can be negative), the judge's agreement in [0, 1] —
through the API and through the report page alike; a value out of bounds changes nothing."""

import pytest
from django.urls import reverse

from annotation.judge_validation.services import validation_project_create

from .judge_validation_setup import run_simulation_audit

pytestmark = pytest.mark.django_db


def thresholds(project) -> set[tuple[float, float]]:
    return set(project.judge_validations.values_list("human_alpha_min", "judge_agreement_min"))


def test_thresholds_are_saved_for_the_project_within_the_models_bounds(researcher_client, researcher):
    audit = run_simulation_audit("thresholds audit")
    project = validation_project_create(audit=audit, size=6, seed=1, training_pool=2, by=researcher)
    [validation] = project.judge_validations.all()
    api = reverse("annotation-jv-thresholds", args=[validation.pk])

    ok = researcher_client.put(
        api, {"human_alpha_min": -0.2, "judge_agreement_min": 0.7}, content_type="application/json"
    )
    assert ok.status_code == 200
    assert thresholds(project) == {(-0.2, 0.7)}

    refused = researcher_client.put(
        api, {"human_alpha_min": 0.8, "judge_agreement_min": -0.5}, content_type="application/json"
    )
    assert refused.status_code == 400 and "judge_agreement_min" in refused.json()

    # The report page goes through the same service: the same bounds, an error message, nothing changed.
    page = reverse("annotation:judge-validation-action", args=[project.pk, "thresholds"])
    form = {"validation": validation.pk, "human_alpha_min": "0.8", "judge_agreement_min": "-0.5"}
    response = researcher_client.post(page, form, follow=True)
    assert "The judge agreement threshold is between 0 and 1." in response.content.decode()
    assert thresholds(project) == {(-0.2, 0.7)}
