"""The run page as the hub: its live panel (what htmx polls) carries the controls that match the state,
the outcome (finished / finished with failures / failed, with the errors grouped by cause and host), rates
that stop when paused, the dialogue table, and Results / Exports / Clone once finished."""

import pytest
from django.urls import reverse

from audits.models import Audit, Dialogue
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint, simulation_endpoint
from audits.tests.server_emulations import request_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_endpoint_audit(settings):
    """Every dialogue's first call goes to a port nobody listens on."""
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 1, "backoff_base": 0.0, "backoff_cap": 0.0, "max_retry_after": 1}
    dead = openai_endpoint("dead tutor", "http://127.0.0.1:9/v1", timeout=1.0)
    sim = simulation_endpoint("student and judge")
    audit = audit_create(
        name="dead endpoint",
        tutors=[dead],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(2, prefix="dead"),
        conditions=explicit_conditions(),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    return audit


def live(client, audit, **query):
    response = client.get(reverse("audits:audit-progress", args=[audit.pk]), query)
    assert response.status_code == 200
    return response.content.decode()


def test_an_audit_whose_every_dialogue_failed_reads_failed_with_the_error_grouped(
    researcher_client, dead_endpoint_audit, analysis_inline
):
    audit = dead_endpoint_audit
    n = audit.dialogues.count()
    assert audit.dialogues.filter(status=Dialogue.Status.FAILED).count() == n > 0
    panel = live(researcher_client, audit)
    assert 'data-outcome="failed"' in panel and 'class="bad">failed</strong>' in panel
    assert f"every one of {n} dialogues failed" in panel
    assert 'id="failure-groups"' in panel and 'id="call-failure-groups"' in panel and "127.0.0.1:9" in panel
    assert "hx-get" not in panel  # nothing left to poll for
    # Its results link explains the failure; no empty report or export is offered as if there were results.
    assert 'id="results-link"' in panel and "format=html" not in panel and "format=json" not in panel
    # The dashboard and the results page say so too, and the dashboard offers no results of it.
    dashboard = researcher_client.get(reverse("audits:dashboard")).content.decode()
    assert '<td class="bad">Failed</td>' in dashboard
    results = researcher_client.get(reverse("audits:results", args=[audit.pk])).content.decode()
    assert 'id="run-failed"' in results and "Computing" not in results
    # The HTML report, fetched by its URL, opens with the failure and names the outcome.
    report = researcher_client.get(reverse("audits:results-export", args=[audit.pk]), {"format": "html"})
    text = report.content.decode()
    assert report.status_code == 200 and 'id="run-failed"' in text and "(failed)" in text
    assert '<span class="bad">failed</span>' in text  # the methods box: the outcome, in red


def test_a_finished_audit_links_its_results_and_has_no_running_controls(researcher_client):
    sim = simulation_endpoint("all in one")
    audit = audit_create(
        name="fine",
        tutors=[sim],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(1, prefix="fine"),
        conditions=explicit_conditions(),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    panel = live(researcher_client, audit)
    assert 'data-outcome="finished"' in panel and 'id="results-link"' in panel
    assert reverse("audits:results", args=[audit.pk]) in panel and "format=html" in panel and 'href="#clone"' in panel
    assert "'pause'" not in panel and ">Pause<" not in panel and ">Cancel<" not in panel
    assert panel.count("<tr>") >= audit.dialogues.count()  # the dialogue table is in the live panel
    assert 'id="clone"' in researcher_client.get(reverse("audits:audit-detail", args=[audit.pk])).content.decode()
    # The dialogue filter: a status filters; a misspelt one is a 400 naming the statuses, on the page and the panel.
    done = researcher_client.get(reverse("audits:audit-progress", args=[audit.pk]), {"status": "done"})
    assert done.status_code == 200 and done.content.decode().count("<tr>") >= audit.dialogues.count()
    for url in (reverse("audits:audit-detail", args=[audit.pk]), reverse("audits:audit-progress", args=[audit.pk])):
        refused = researcher_client.get(url, {"status": "Done"})
        assert refused.status_code == 400
        assert "status: One of pending, running, done, failed" in refused.content.decode()


def test_some_failures_read_finished_with_failures_and_a_paused_audit_has_no_rates(researcher_client, analysis_inline):
    sim = simulation_endpoint("all in one")
    audit = audit_create(
        name="partly",
        tutors=[sim],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(2, prefix="partly"),
        conditions=explicit_conditions(),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    first = audit.dialogues.order_by("pk").first()
    Dialogue.objects.filter(pk=first.pk).update(status=Dialogue.Status.FAILED, error="tutor call failed: HTTP 500")
    panel = live(researcher_client, audit)
    assert 'data-outcome="finished_with_failures"' in panel and "finished with failures" in panel
    assert "tutor call failed: HTTP 500" in panel and "Retry failed dialogues" in panel
    assert "dialogues/min" in panel
    report = researcher_client.get(reverse("audits:results-export", args=[audit.pk]), {"format": "html"})
    assert 'id="run-failures"' in report.content.decode() and "(finished with failures)" in report.content.decode()

    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.PAUSED)
    paused = live(researcher_client, audit)
    assert 'data-outcome="paused"' in paused and "dialogues/min" not in paused and "calls/s" not in paused
    assert ">Resume<" in paused


def test_the_run_page_and_the_api_say_what_each_model_is_sent_and_the_students_temperature(researcher_client):
    tutor = openai_endpoint("sent llama", "http://127.0.0.1:9/v1", model="llama-3.1-8b", temperature=0.7)
    gpt5 = openai_endpoint("sent gpt-5", "http://127.0.0.1:9/v1", model="gpt-5-mini", max_tokens=4000)
    judge = simulation_endpoint("sent judge")

    def audit_with(student):
        return audit_create(
            name=f"sent to {student.name}",
            tutors=[tutor],
            student_endpoint=student,
            judge_endpoint=judge,
            questions=make_questions(1, prefix=student.name),
            conditions=explicit_conditions()[:2],
        )

    reasoning_student, plain_student = audit_with(gpt5), audit_with(tutor)
    html = researcher_client.get(reverse("audits:audit-detail", args=[reasoning_student.pk])).content.decode()
    rows = request_rows(html, '<th scope="row">Sent with every request</th>')
    assert rows[:2] == [
        "tutor (llama-3.1-8b): temperature 0.7, no token limit",
        "student (gpt-5-mini): no temperature (the model's default), max_completion_tokens 4000",
    ]
    assert [row.split()[0] for row in rows] == ["tutor", "student", "judge", "check"]
    assert "not at 0" in html.split('<th scope="row">Student</th>', 1)[1].split("</tr>", 1)[0]
    # The API's audit: the same rows, and the temperature the student ran at (null: the model's default).
    api = researcher_client.get(f"/api/audits/{reasoning_student.pk}/").json()
    assert api["student_temperature"] is None
    student_row = next(row for row in api["requests_sent"] if row["role"] == "student")
    assert student_row["temperature"] is None and "not at 0" in student_row["note"]
    api = researcher_client.get(f"/api/audits/{plain_student.pk}/").json()
    assert api["student_temperature"] == 0
    assert [row["temperature"] for row in api["requests_sent"] if row["role"] in ("tutor", "student")] == [0.7, 0]
    html = researcher_client.get(reverse("audits:audit-detail", args=[plain_student.pk])).content.decode()
    assert "temperature 0, the paper" in html.split('<th scope="row">Student</th>', 1)[1].split("</tr>")[0]
