"""Endpoint roles (tutor, student, judge): every endpoint has all three unless told otherwise, the demo's simulation
endpoints have their own, each door edits them (page, API, admin), and the launch form's lists offer an endpoint only
in its roles' lists; every other door that creates an audit refuses an endpoint outside its roles."""

import importlib
import json
import re

import pytest
from django.apps import apps
from django.core.management.base import CommandError
from django.urls import reverse

from audits import demo
from audits.endpoint_roles import ROLES
from audits.management.commands.run_audit import audit_from_config
from audits.models import Audit, ModelEndpoint
from audits.services.audit_lifecycle import audit_create_from_design
from audits.tests.engine_factories import make_questions, simulation_endpoint

pytestmark = pytest.mark.django_db


def with_roles(name: str, *roles: str) -> ModelEndpoint:
    endpoint = simulation_endpoint(name)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(roles=list(roles))
    return endpoint


def offered(form, field: str) -> set[str]:
    return {endpoint.name for endpoint in form.fields[field].queryset}


def test_the_launch_forms_lists_offer_each_endpoint_in_its_roles(researcher_client):
    tutor, student, judge = (
        with_roles("r-tutor", "tutor"),
        with_roles("r-student", "student"),
        with_roles("r-judge", "judge"),
    )
    everything = simulation_endpoint("r-any")
    assert everything.roles == list(ROLES)
    form = researcher_client.get(reverse("audits:audit-new")).context["form"]
    assert offered(form, "tutors") == {"r-tutor", "r-any"}
    assert offered(form, "student_endpoint") == {"r-student", "r-any"}
    assert offered(form, "judge_endpoint") == offered(form, "check_endpoint") == {"r-judge", "r-any"}
    # A tutor cannot be posted as the judge, nor the judge as a tutor.
    make_questions(15)
    data = {"name": "roles", "student_endpoint": student.pk, "judge_endpoint": tutor.pk, "tutors": [judge.pk],
            "domains": ["mathematics"], "seed": 0, "control": "on", "explicit_dimensions": ["gender"],
            "t_max": 10, "max_reasks": 2}  # fmt: skip
    response = researcher_client.post(reverse("audits:audit-new"), data)
    form = response.context["form"]
    assert set(form.errors) == {"judge_endpoint", "tutors"} and not Audit.objects.exists()
    # The preview's tutor list (swapped in as the form changes) keeps to tutors as well.
    preview = researcher_client.post(reverse("audits:audit-new-preview"), {**data, "judge_endpoint": judge.pk})
    oob = preview.content.decode().split('id="tutor-choices"')[1]
    assert f'value="{tutor.pk}"' in oob and f'value="{judge.pk}"' not in oob and f'value="{student.pk}"' not in oob


def test_the_page_the_api_and_the_admin_edit_roles(researcher_client, admin_client):
    endpoint = simulation_endpoint("r-edit")
    form = {"name": "r-edit", "provider": "simulation", "model": "r-edit", "temperature": 0, "timeout": 60,
            "max_concurrency": 8, "revision": 1, "extra_params": "{}", "simulation_config": "{}",
            "price_input_per_million": 0, "price_output_per_million": 0, "batch_price_factor": 0.5,
            "roles": ["judge"]}  # fmt: skip
    page = researcher_client.get(reverse("audits:endpoint-edit", args=[endpoint.pk])).content.decode()
    assert page.count('name="roles"') == len(ROLES)
    assert researcher_client.post(reverse("audits:endpoint-edit", args=[endpoint.pk]), form).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.roles == ["judge"]
    # None ticked, or a form without the field: every role, the default.
    del form["roles"]
    assert researcher_client.post(reverse("audits:endpoint-edit", args=[endpoint.pk]), form).status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.roles == list(ROLES)

    listed = researcher_client.get(reverse("audits:endpoints")).content.decode()
    assert '<td class="endpoint-roles">tutor, student, judge</td>' in listed
    url = f"/api/model-endpoints/{endpoint.pk}/"
    assert researcher_client.get(url).json()["roles"] == list(ROLES)
    changed = researcher_client.patch(url, {"roles": ["tutor", "student"]}, content_type="application/json")
    assert changed.status_code == 200 and changed.json()["roles"] == ["tutor", "student"]
    for bad in ([], ["teacher"], "tutor"):
        refused = researcher_client.patch(url, {"roles": bad}, content_type="application/json")
        assert refused.status_code == 400, bad
    endpoint.refresh_from_db()
    assert endpoint.roles == ["tutor", "student"]

    admin_page = admin_client.get(reverse("admin:audits_modelendpoint_change", args=[endpoint.pk])).content.decode()
    boxes = {role: re.search(rf'<input[^>]*name="roles" value="{role}"[^>]*>', admin_page).group(0) for role in ROLES}
    assert [role for role, box in boxes.items() if "checked" in box] == ["tutor", "student"]


def test_existing_endpoints_keep_every_role_and_the_demos_get_their_own():
    migration = importlib.import_module("audits.migrations.0013_endpoint_roles")
    for name in migration.DEMO_ROLES:
        simulation_endpoint(name)
    other = simulation_endpoint("made before roles")
    migration.demo_roles(apps, None)
    roles = dict(ModelEndpoint.objects.values_list("name", "roles"))
    assert roles["made before roles"] == list(ROLES) and other.roles == list(ROLES)
    assert roles["Simulated student"] == ["student"] and roles["Simulated judge (cue-sensitive)"] == ["judge"]
    assert roles["Simulated tutor B (planted bias)"] == ["tutor"]
    # A fresh demo makes them with those roles too.
    ModelEndpoint.objects.all().delete()
    made = {demo._fair_tutor(), demo._student(), demo._rule_judge()}
    assert {endpoint.name: endpoint.roles for endpoint in made} == {
        name: roles for name, roles in migration.DEMO_ROLES.items() if name in {e.name for e in made}
    }


def test_every_door_that_creates_an_audit_refuses_an_endpoint_outside_its_roles(researcher_client, tmp_path):
    """One rule (`endpoint_roles.role_refusal`, in `audit_create`) behind the API, `run_audit --config`, and a clone
    from the page and the API: each refuses, naming the endpoint and its roles, and creates nothing."""
    tutor, judge = with_roles("d-tutor", "tutor"), with_roles("d-judge", "judge")
    anything = simulation_endpoint("d-any")
    make_questions(3)
    design = {"selection": {"domains": ["mathematics"], "count": 2, "seed": 0}, "conditions": {"control": True}}
    refusal = f"not set to play the student: {judge} (roles: judge)"

    api = researcher_client.post(
        "/api/audits/",
        {"name": "api", "tutors": [tutor.pk], "student_endpoint": judge.pk, "judge_endpoint": judge.pk, **design},
        content_type="application/json",
    )
    assert api.status_code == 400 and refusal in api.json()["detail"]

    path = tmp_path / "audit.json"
    path.write_text(json.dumps({"name": "cli", "tutors": [judge.name], "student": anything.name,
                                "judge": anything.name, **design}))  # fmt: skip
    with pytest.raises(CommandError, match=re.escape(f"not set to play the tutor: {judge} (roles: judge)")):
        audit_from_config(path)
    assert not Audit.objects.exists()

    source = audit_create_from_design(
        name="source", tutors=[tutor], student_endpoint=anything, judge_endpoint=judge,
        selection=design["selection"], choice={**design["conditions"], "explicit_dimensions": ["gender"]},
    )  # fmt: skip
    page = researcher_client.post(
        reverse("audits:audit-clone", args=[source.pk]), {"factor": "judge_endpoint", "endpoint": tutor.pk},
        follow=True,
    )  # fmt: skip
    assert f"not set to play the judge: {tutor} (roles: tutor)" in page.content.decode()
    clone = researcher_client.post(
        f"/api/audits/{source.pk}/clone/", {"factor": "tutors", "value": [judge.pk]}, content_type="application/json"
    )
    assert clone.status_code == 400 and f"not set to play the tutor: {judge} (roles: judge)" in clone.json()["detail"]
    assert Audit.objects.count() == 1
