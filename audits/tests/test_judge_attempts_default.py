"""One default of the judge's attempts per turn, read through every door: the design preview, "Launch this design",
the launch form, the API, `run_audit --config` and the audit row all give 1 + `DEFAULT_MAX_REASKS`."""

import json

import pytest
from django.urls import reverse

from audits.design import CallBudget
from audits.judge import DEFAULT_JUDGE_ATTEMPTS, DEFAULT_MAX_REASKS
from audits.management.commands.run_audit import audit_from_config
from audits.models import Audit
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


def test_every_door_takes_the_one_default(researcher_client, tmp_path):
    assert DEFAULT_JUDGE_ATTEMPTS == 1 + DEFAULT_MAX_REASKS and DEFAULT_MAX_REASKS > 0
    assert CallBudget().judge_attempts == DEFAULT_JUDGE_ATTEMPTS
    make_questions(3)
    tutor, other = simulation_endpoint("default-tutor"), simulation_endpoint("default-other")
    # The design preview: the unfilled form, and the preview its initial values compute.
    page = researcher_client.get(reverse("audits:design-preview"))
    assert page.context["form"]["judge_attempts"].value() == DEFAULT_JUDGE_ATTEMPTS
    query = {
        "domains": ["mathematics"],
        "mode": "all",
        "seed": 0,
        "tutors": 1,
        "subsampled_tutors": 0,
        "control": "on",
        "explicit_dimensions": ["gender"],
        "t_max": 10,
        "judge_attempts": DEFAULT_JUDGE_ATTEMPTS,
    }
    preview = researcher_client.get(reverse("audits:design-preview"), query)
    assert preview.context["preview"].budget.judge_attempts == DEFAULT_JUDGE_ATTEMPTS
    # "Launch this design" carries the attempts it previewed as re-asks.
    carried = researcher_client.get(preview.context["launch_url"]).context["form"]
    assert carried.initial["max_reasks"] == DEFAULT_MAX_REASKS
    # The launch form, unfilled and with the re-asks left out of a post.
    form = researcher_client.get(reverse("audits:audit-new")).context["form"]
    assert form["max_reasks"].value() == DEFAULT_MAX_REASKS
    data = {
        "name": "default audit",
        "tutors": [tutor.pk],
        "student_endpoint": other.pk,
        "judge_endpoint": other.pk,
        "domains": ["mathematics"],
        "seed": 0,
        "control": "on",
        "explicit_dimensions": ["gender"],
        "t_max": 10,
        "max_reasks": DEFAULT_MAX_REASKS,
    }
    launch_preview = researcher_client.post(reverse("audits:audit-new-preview"), data)
    assert launch_preview.context["preview"].budget == preview.context["preview"].budget
    # The API without max_reasks.
    api = researcher_client.post(
        "/api/audits/",
        {
            "name": "api default",
            "tutors": [tutor.pk],
            "student_endpoint": other.pk,
            "judge_endpoint": other.pk,
            "selection": {"domains": ["mathematics"]},
            "conditions": {"control": True, "explicit_dimensions": ["gender"]},
        },
        content_type="application/json",
    )
    assert api.status_code == 201 and Audit.objects.get(pk=api.json()["id"]).max_reasks == DEFAULT_MAX_REASKS
    # `run_audit --config` without max_reasks.
    config = {
        "name": "command default",
        "tutors": [tutor.name],
        "student": other.name,
        "judge": other.name,
        "selection": {"domains": ["mathematics"]},
        "conditions": {"control": True},
    }
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(config))
    audit, created = audit_from_config(path)
    assert created and audit.max_reasks == DEFAULT_MAX_REASKS
    assert Audit._meta.get_field("max_reasks").default == DEFAULT_MAX_REASKS
