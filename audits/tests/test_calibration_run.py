"""A calibration run from the launch form: tick it, choose a level, a metric and a shift, and the form adds a
seeded simulation tutor planting that one bias (no hand-written JSON); the audit, run inline, finds that cell. The
API makes the same tutor through the same service, and a bias the design cannot find is refused."""

import pytest
from django.urls import reverse

from audits.endpoint_roles import TUTOR
from audits.models import Audit, ModelEndpoint
from audits.services.analysis import audit_analysis
from audits.services.calibration_runs import calibration_tutor_get_or_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import make_questions, simulation_endpoint

PLANTED = {"level": "first_language=non_english_l1", "metric": "corrective_tone", "shift": -0.6}


def calibration_form(endpoint, **changes):
    data = {
        "name": "calibration from the form",
        "student_endpoint": endpoint.pk,
        "judge_endpoint": endpoint.pk,
        "domains": ["mathematics"],
        "seed": 0,
        "explicit_dimensions": ["first_language"],
        "t_max": 3,
        "max_reasks": 2,
        "calibration": "on",
        "calibration_level": PLANTED["level"],
        "calibration_metric": PLANTED["metric"],
        "calibration_shift": PLANTED["shift"],
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


@pytest.mark.django_db
def test_a_calibration_run_from_the_form_finds_its_planted_cell(researcher_client):
    make_questions(30)
    other = simulation_endpoint("cal-other")
    # The preview counts the planted tutor before it exists: no "no tutor chosen".
    preview = researcher_client.post(reverse("audits:audit-new-preview"), calibration_form(other))
    assert preview.context["preview"].dialogues == 30 * 2 and not preview.context["check"].blocking
    response = researcher_client.post(reverse("audits:audit-new"), calibration_form(other))
    assert response.status_code == 302, response.context["form"].errors
    audit = Audit.objects.get()
    (tutor,) = audit.tutors.all()
    assert tutor.is_simulation and tutor.roles == [TUTOR] and tutor.simulation_config["bias"] == [PLANTED]
    assert audit.description.startswith("Calibration run (simulation)") and audit.uses_simulation
    page = researcher_client.get(reverse("audits:audit-detail", args=[audit.pk])).content.decode()
    assert "Calibration run (simulation)" in page and "badge simulation" in page

    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    analysis = audit_analysis(audit=audit)
    (cell,) = analysis.pedagogical.where(kind="explicit", family="within", metric=PLANTED["metric"])
    assert cell.level_b == "non_english_l1" and cell.r < 0 and cell.violation
    # A second calibration run of the same bias reuses the planted tutor.
    again = researcher_client.post(reverse("audits:audit-new"), calibration_form(other, name="again"))
    assert again.status_code == 302 and ModelEndpoint.objects.filter(name=tutor.name).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize(
    "changes, field, message",
    [
        ({"explicit_dimensions": ["gender"]}, "calibration_level", "No condition of the design cues first_language"),
        ({"calibration_level": None}, "calibration_level", "A calibration run needs it."),
        ({"calibration_shift": 0}, "calibration_shift", "A shift of 0 plants nothing."),
        ({"calibration_shift": 3}, "calibration_shift", "less than or equal to 1"),
        ({"calibration_metric": "kindness"}, "calibration_metric", "Select a valid choice"),
    ],
)
def test_a_bias_the_run_could_not_find_is_refused_on_the_form(researcher_client, changes, field, message):
    make_questions(15)
    other = simulation_endpoint("cal-other")
    response = researcher_client.post(reverse("audits:audit-new"), calibration_form(other, **changes))
    assert response.status_code == 200 and message in " ".join(response.context["form"].errors.get(field, []))
    assert not Audit.objects.exists() and not ModelEndpoint.objects.filter(roles=[TUTOR]).exists()


@pytest.mark.django_db
def test_the_api_makes_the_same_tutor_through_the_same_service(researcher_client):
    made = researcher_client.post("/api/model-endpoints/calibration-tutor/", PLANTED, content_type="application/json")
    assert made.status_code == 200 and made.json()["is_simulation"] and made.json()["roles"] == [TUTOR]
    assert made.json()["simulation_config"] == {"seed": 0, "bias": [PLANTED]}
    assert calibration_tutor_get_or_create(**PLANTED).pk == made.json()["id"]
    for bad in ({**PLANTED, "level": "first_language=klingon"}, {**PLANTED, "metric": "kindness"}):
        refused = researcher_client.post(
            "/api/model-endpoints/calibration-tutor/", bad, content_type="application/json"
        )
        assert refused.status_code == 400 and "detail" in refused.json()
    assert ModelEndpoint.objects.count() == 1
