"""In the browser: the design preview and the launch form share one judge-attempt default, the launch form's lists
offer each endpoint only in its roles, and a calibration run planted from the form (level, metric, shift; no JSON)
is launched, run, and found at the top of its results page."""

import pytest
from playwright.sync_api import expect

from audits.judge import DEFAULT_MAX_REASKS
from audits.models import Audit, ModelEndpoint
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import make_questions, simulation_endpoint
from conftest import browser_login

LEVEL, METRIC, SHIFT = "first_language=non_english_l1", "corrective_tone", "-0.6"


def with_roles(name: str, *roles: str) -> ModelEndpoint:
    endpoint = simulation_endpoint(name)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(roles=list(roles))
    return endpoint


def option_labels(page, select: str) -> set[str]:
    return {text.strip() for text in page.locator(f"{select} option").all_inner_texts() if text.strip("- ")}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("analysis_inline")
def test_a_calibration_run_from_the_form_is_found_on_its_results_page(page, make_user, monkeypatch):
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    make_user("researcher", username="cal")
    make_questions(30)
    with_roles("only-tutor", "tutor")
    with_roles("only-student", "student")
    with_roles("only-judge", "judge")
    browser_login(page, "cal")

    # One judge-attempt default: the preview's attempts are the launch form's re-asks plus the first ask.
    page.goto("/audits/design/preview/")
    expect(page.locator("#id_judge_attempts")).to_have_value(str(1 + DEFAULT_MAX_REASKS))
    page.goto("/audits/runs/new/")
    expect(page.locator("#id_max_reasks")).to_have_value(str(DEFAULT_MAX_REASKS))

    # Each list offers the endpoints of its role only.
    assert option_labels(page, "#id_student_endpoint") == {"only-student (simulation)"}
    assert option_labels(page, "#id_judge_endpoint") == {"only-judge (simulation)"}
    tutors = page.locator("#tutor-choices")
    expect(tutors).to_contain_text("only-tutor")
    expect(tutors).not_to_contain_text("only-student")
    expect(tutors).not_to_contain_text("only-judge")

    # A calibration run: no tutor ticked, the planted tutor made from three choices.
    page.fill("#id_name", "calibration in the browser")
    page.select_option("#id_student_endpoint", label="only-student (simulation)")
    page.select_option("#id_judge_endpoint", label="only-judge (simulation)")
    page.get_by_label("mathematics", exact=True).check()
    if page.locator("#id_control").is_checked():
        page.locator("#id_control").uncheck()
    page.locator("#id_explicit_dimensions").get_by_label("First language").check()
    page.fill("#id_t_max", "3")
    page.locator("#id_calibration").check()
    page.select_option("#id_calibration_level", value=LEVEL)
    page.select_option("#id_calibration_metric", value=METRIC)
    page.fill("#id_calibration_shift", SHIFT)
    page.locator("#id_calibration_shift").dispatch_event("change")
    expect(page.locator("#launch-preview")).to_contain_text("calibration tutor (simulation)")
    expect(page.locator("#preview-dialogues")).to_have_text("60")
    page.click("#audit-create")
    page.wait_for_url("**/audits/runs/*/")
    audit = Audit.objects.get(name="calibration in the browser")
    (planted,) = audit.tutors.all()
    expect(page.locator("body")).to_contain_text("Calibration run (simulation)")

    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    page.goto(f"/audits/results/{audit.pk}/")
    finding = page.locator(
        f'#findings [data-tutor="{planted.pk}"] li[data-dimension="first_language"]'
        f'[data-level-b="non_english_l1"][data-metric="{METRIC}"]'
    )
    expect(finding).to_have_count(1)
    expect(finding).to_contain_text("less encouraging corrections")
