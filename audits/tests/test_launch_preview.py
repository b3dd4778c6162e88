"""The launch form is the design preview: its numbers are the preview page's, its launch check blocks a
design with nothing to compare and asks to confirm one whose every contrast is insufficient (or whose
endpoint failed its last connection test), and its tutor list leaves out the student and the judge."""

import re
import socket

import pytest
from django.urls import reverse

from audits.conditions import control_condition, default_levels, explicit_conditions
from audits.design import CallBudget, QuestionSelection, TutorPlan, preview_design
from audits.design_launch import TOKENS_PER_CALL, Price, cost_estimate, launch_check
from audits.models import Audit, ModelEndpoint
from audits.services.endpoints import endpoint_connection_test
from audits.tests.engine_factories import make_questions, openai_endpoint, simulation_endpoint
from audits.tests.server_emulations import request_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoints():
    tutor = simulation_endpoint("lp-tutor")
    ModelEndpoint.objects.filter(pk=tutor.pk).update(price_input_per_million=2, price_output_per_million=8)
    tutor.refresh_from_db()
    return {
        "tutor": tutor,
        "student": simulation_endpoint("lp-student"),
        "judge": simulation_endpoint("lp-judge"),
        "spare": simulation_endpoint("lp-spare"),
    }


def form_data(endpoints, **changes):
    data = {
        "name": "launch preview audit",
        "tutors": [endpoints["tutor"].pk],
        "student_endpoint": endpoints["student"].pk,
        "judge_endpoint": endpoints["judge"].pk,
        "domains": ["mathematics"],
        "seed": 0,
        "control": "on",
        "explicit_dimensions": ["gender"],
        "t_max": 10,
        "max_reasks": 2,
    }
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def launch(client, data):
    return client.post(reverse("audits:audit-new"), data)


# --- the pure check and cost ---------------------------------------------------------------------------


def _preview(conditions, questions=20):
    return preview_design(
        {"mathematics": list(range(1, questions + 1))},
        QuestionSelection(domains=("mathematics",)),
        [TutorPlan("a"), TutorPlan("b")],
        conditions,
        budget=CallBudget(t_max=10, judge_attempts=3),
    )


def test_cost_is_the_call_bound_times_assumed_tokens_times_each_endpoints_price():
    preview = _preview([control_condition(), *explicit_conditions(default_levels(), ["gender"])])
    # 20 questions × 4 conditions = 80 dialogues per tutor, 800 tutor turns each; 1600 in all.
    cost = cost_estimate(
        preview,
        tutors={"a": Price("a", 1, 2), "b": Price("b", 0, 0)},
        student=Price("s", 0.5, 0.5),
        judge=Price("j", 3, 6),
        check=Price("j", 3, 6),
    )
    lines = {(line.role, line.endpoint): line for line in cost.lines}
    assert lines["tutor", "a"].calls == 800 and lines["tutor", "b"].calls == 800
    assert lines["judge", "j"].calls == 1600 * 3 and lines["reveal_check", "j"].calls == 1600
    t_in, t_out = TOKENS_PER_CALL["tutor"]
    assert lines["tutor", "a"].cost == pytest.approx(800 * (t_in * 1 + t_out * 2) / 1e6)
    j_in, j_out = TOKENS_PER_CALL["judge"]
    assert lines["judge", "j"].cost == pytest.approx(4800 * (j_in * 3 + j_out * 6) / 1e6)
    assert cost.total == pytest.approx(sum(line.cost for line in cost.lines)) and cost.total > 0
    assert sum(line.calls for line in cost.lines) == preview.calls["total"]


def test_a_control_only_design_is_blocked_and_a_small_one_needs_confirming():
    blocked = launch_check(_preview([control_condition()]))
    assert blocked.blocking and "nothing to compare" in blocked.blocking[0]
    assert "cannot be launched" in blocked.refusal(confirmed=True)
    small = launch_check(_preview([control_condition(), *explicit_conditions(default_levels(), ["gender"])], 5))
    assert not small.blocking and "fewer than 15 pairs" in small.confirm[0]
    assert "launch anyway" in small.refusal(confirmed=False) and small.refusal(confirmed=True) is None
    enough = launch_check(_preview([control_condition(), *explicit_conditions(default_levels(), ["gender"])], 15))
    assert enough == launch_check(_preview([control_condition(), *explicit_conditions(default_levels())], 15))
    assert enough.refusal(confirmed=False) is None
    failing = launch_check(
        _preview([control_condition(), *explicit_conditions(default_levels())], 15), failed_endpoints=["x"]
    )
    assert failing.confirm == ("x failed its last connection test",)


# --- the form: blocking and confirming ----------------------------------------------------------------


def test_a_control_only_design_is_refused(researcher_client, endpoints):
    make_questions(20)
    response = launch(researcher_client, form_data(endpoints, explicit_dimensions=None, confirm="on"))
    assert response.status_code == 200 and not Audit.objects.exists()
    page = response.content.decode()
    assert "cannot be launched" in page and "nothing to compare" in page and "launch-blocking" in page


def test_no_tutor_and_no_question_are_refused(researcher_client, endpoints):
    make_questions(20)
    response = launch(researcher_client, form_data(endpoints, tutors=None, domains=None, confirm="on"))
    page = response.content.decode()
    assert "no tutor chosen" in page and "the selection holds no questions" in page
    assert not Audit.objects.exists()


def test_five_pairs_per_contrast_asks_for_launch_anyway(researcher_client, endpoints, monkeypatch):
    monkeypatch.setattr("audits.tasks.audit_run_batch_task.apply_async", lambda *a, **k: None)
    make_questions(20)
    response = launch(researcher_client, form_data(endpoints, count=5, launch="on"))
    page = response.content.decode()
    assert response.status_code == 200 and not Audit.objects.exists()
    assert page.count("launch-confirm") == 1 and "every contrast has fewer than 15 pairs" in page
    assert page.count("every contrast has fewer than 15 pairs") == 2  # the refusal above the form, the notice
    response = launch(researcher_client, form_data(endpoints, count=5, launch="on", confirm="on"))
    audit = Audit.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/runs/{audit.pk}/")
    assert audit.status == Audit.Status.RUNNING and audit.dialogues.count() == 5 * 4  # control + three gender levels


def test_enough_pairs_launch_without_confirming(researcher_client, endpoints):
    make_questions(15)
    response = launch(researcher_client, form_data(endpoints))
    assert response.status_code == 302 and Audit.objects.get().dialogues.count() == 0  # created, not launched


def test_an_endpoint_that_failed_its_last_test_asks_for_confirmation(researcher_client, endpoints):
    make_questions(15)
    ok, _ = endpoint_connection_test(endpoint=endpoints["judge"])
    judge = ModelEndpoint.objects.get(pk=endpoints["judge"].pk)
    assert ok and judge.last_test_ok is True and judge.last_tested_at is not None
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    dead = openai_endpoint("lp-dead-check", f"http://127.0.0.1:{port}/v1")
    ok, message = endpoint_connection_test(endpoint=dead)
    dead.refresh_from_db()
    assert not ok and dead.last_test_ok is False and dead.last_test_message == message[:500]
    response = launch(researcher_client, form_data(endpoints, check_endpoint=dead.pk))
    assert "lp-dead-check failed its last connection test" in response.content.decode()
    assert not Audit.objects.exists()
    assert launch(researcher_client, form_data(endpoints, check_endpoint=dead.pk, confirm="on")).status_code == 302
    endpoints_page = researcher_client.get(reverse("audits:endpoints")).content.decode()
    assert f"Failed: {message}" in endpoints_page and "(last test," in endpoints_page
    # A later test that passes clears the warning.
    ModelEndpoint.objects.filter(pk=dead.pk).update(last_test_ok=True)
    response = researcher_client.post(reverse("audits:audit-new-preview"), form_data(endpoints, check_endpoint=dead.pk))
    assert response.context["check"].confirm == ()


# --- the same numbers as the preview page --------------------------------------------------------------


def test_the_launch_preview_has_the_preview_pages_numbers(researcher_client, endpoints):
    make_questions(30)
    make_questions(12, domain="physics")
    query = {
        "domains": ["mathematics", "physics"],
        "mode": "count",
        "count": 20,
        "fraction": 0.3,
        "seed": 3,
        "tutors": 1,
        "subsampled_tutors": 0,
        "subsample_fraction": 0.3,
        "control": "on",
        "explicit_dimensions": ["gender", "first_language"],
        "intersectional_dimensions": ["gender", "first_language"],
        "t_max": 8,
        "judge_attempts": 3,
    }
    page = researcher_client.get(reverse("audits:design-preview"), query)
    expected = page.context["preview"]
    launch_url = page.context["launch_url"]
    assert f'href="{launch_url.replace("&", "&amp;")}"' in page.content.decode()
    # "Launch this design" carries the design into the launch form.
    form = researcher_client.get(launch_url).context["form"]
    assert form.initial["count"] == 20 and form.initial["max_reasks"] == 2 and form.initial["seed"] == 3
    assert form.initial["intersectional_dimensions"] == ["gender", "first_language"]
    data = form_data(
        endpoints,
        domains=["mathematics", "physics"],
        count=20,
        seed=3,
        explicit_dimensions=["gender", "first_language"],
        intersectional_dimensions=["gender", "first_language"],
        t_max=8,
        max_reasks=2,
    )
    response = researcher_client.post(reverse("audits:audit-new-preview"), data)
    got = response.context["preview"]
    for attribute in ("selected", "conditions", "dialogues", "calls", "budget"):
        assert getattr(got, attribute) == getattr(expected, attribute), attribute
    strip = [(p.domain, p.kind, p.family, p.contrasts, p.pairs, p.min_detectable_effect) for p in expected.power]
    assert [(p.domain, p.kind, p.family, p.contrasts, p.pairs, p.min_detectable_effect) for p in got.power] == strip
    assert got.contrast_list == expected.contrast_list
    html = response.content.decode()
    assert (
        f'id="preview-dialogues">{expected.dialogues:,}<' in html
        and f'id="preview-calls">{expected.calls["total"]:,}<' in html
    )
    assert 'id="preview-cost">' in html and response.context["cost"].total > 0


def test_the_launch_preview_says_what_each_model_is_sent(researcher_client, endpoints):
    make_questions(20)
    tutor = openai_endpoint("lp-llama", "http://127.0.0.1:9/v1", model="llama-3.1-8b", temperature=0.7, max_tokens=300)
    student = openai_endpoint("lp-gpt5", "http://127.0.0.1:9/v1", model="gpt-5-mini", reasoning_effort="low")
    response = researcher_client.post(
        reverse("audits:audit-new-preview"), form_data(endpoints, tutors=[tutor.pk], student_endpoint=student.pk)
    )
    html = response.content.decode()
    assert "What each model is sent" in html
    rows = request_rows(html, 'id="preview-requests"')
    assert rows[1:3] == [
        "tutor llama-3.1-8b temperature 0.7, max_tokens 300",
        # The student model takes no temperature: it answers at its default, and the preview says so.
        "student gpt-5-mini no temperature (the model's default), reasoning_effort low, no token limit "
        "this model takes no temperature: the student answers at the model's default, not at 0",
    ]
    assert [row.split()[0] for row in rows] == ["Role", "tutor", "student", "judge", "check"]
    # A student that takes a temperature is sent 0, whatever its endpoint says.
    response = researcher_client.post(
        reverse("audits:audit-new-preview"), form_data(endpoints, tutors=[student.pk], student_endpoint=tutor.pk)
    )
    rows = request_rows(response.content.decode(), 'id="preview-requests"')
    assert rows[2] == "student llama-3.1-8b temperature 0, max_tokens 300 temperature 0, the paper's fixed student"


def test_intersectional_and_per_domain_options_reach_the_audit(researcher_client, endpoints):
    make_questions(20)
    make_questions(20, domain="physics")
    data = form_data(
        endpoints,
        domains=["mathematics", "physics"],
        per_domain="physics=0.75, mathematics=16",
        explicit_dimensions=None,
        intersectional_dimensions=["gender", "first_language"],
    )
    assert launch(researcher_client, data).status_code == 302
    audit = Audit.objects.get()
    assert audit.question_selection["per_domain"] == {"physics": 0.75, "mathematics": 16}
    assert (
        audit.questions.filter(domain="physics").count() == 15
        and audit.questions.filter(domain="mathematics").count() == 16
    )
    assert audit.design["intersectional_dimensions"] == ["gender", "first_language"]
    assert audit.conditions.filter(kind="intersectional").exists() or audit.conditions.count() > 1


@pytest.mark.parametrize(
    "per_domain, message",
    [
        ("mathematics", "write domain=value"),
        ("mathematics=lots", "a fraction or a whole number"),
        ("physics=1.5", "(0, 1]"),
    ],
)
def test_bad_per_domain_overrides_are_explained(researcher_client, endpoints, per_domain, message):
    response = launch(researcher_client, form_data(endpoints, per_domain=per_domain))
    assert response.status_code == 200 and message in response.content.decode() and not Audit.objects.exists()


# --- role-appropriate endpoint lists -------------------------------------------------------------------


def test_tutors_are_the_endpoints_not_used_as_student_or_judge(researcher_client, endpoints):
    make_questions(15)
    response = researcher_client.post(reverse("audits:audit-new-preview"), form_data(endpoints))
    oob = re.search(r'<div id="tutor-choices" hx-swap-oob="true">(.*?)</div>\s*$', response.content.decode(), re.S)
    offered = set(re.findall(r'value="(\d+)"', oob.group(1)))
    assert offered == {str(endpoints["tutor"].pk), str(endpoints["spare"].pk)}
    page = researcher_client.get(reverse("audits:audit-new")).content.decode()
    assert "Tutors are the endpoints not used as the student or the judge" in page
    # The judge cannot be ticked as a tutor as well.
    response = launch(researcher_client, form_data(endpoints, tutors=[endpoints["judge"].pk]))
    assert "is the student or the judge here, not a tutor" in response.content.decode()
    assert not Audit.objects.exists()


@pytest.mark.parametrize(
    "changes",
    [
        {"t_max": "many"},
        {"count": "-3"},
        {"count": 5, "fraction": 0.5},
        {"intersectional_dimensions": ["gender"]},
        {"student_endpoint": "999999", "tutors": ["x"]},
        {"names_per_cell": "0", "implicit": "on"},
    ],
)
def test_bad_input_to_the_preview_is_explained_not_a_500(researcher_client, endpoints, changes):
    make_questions(3)
    response = researcher_client.post(reverse("audits:audit-new-preview"), form_data(endpoints, **changes))
    assert response.status_code == 200 and "launch-preview-pending" in response.content.decode()
    assert not response.context.get("preview")


def test_a_design_carried_from_a_broken_preview_query_opens_a_blank_form(researcher_client):
    response = researcher_client.get(reverse("audits:audit-new"), {"domains": "nowhere", "t_max": "x"})
    assert response.status_code == 200 and response.context["form"].initial == {}
