"""An audit whose every dialogue failed reads *failed* at every door, never "finished": the run page's live panel,
the dashboard, the audits list, the API's audit (`outcome` beside `status`) and `manage.py run_audit --inline`
(which then exits non-zero). A connection test reports what is wrong instead of raising, a client that cannot be
loaded included."""

import builtins
import io

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from audits.models import Audit, Dialogue, ModelEndpoint
from audits.services.audit_lifecycle import audit_create
from audits.services.endpoints import endpoint_connection_test
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint, simulation_endpoint


@pytest.fixture
def dead_endpoint_audit(settings):
    """A created audit (draft) whose tutor is an endpoint on a port nobody listens on; one attempt per call."""
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 1, "backoff_base": 0.0, "backoff_cap": 0.0, "max_retry_after": 1}
    dead = openai_endpoint("dead tutor", "http://127.0.0.1:9/v1", timeout=1.0)
    sim = simulation_endpoint("student and judge")
    return audit_create(
        name="dead endpoint",
        tutors=[dead],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(2, prefix="doors"),
        conditions=explicit_conditions(),
    )


@pytest.mark.django_db
def test_an_audit_whose_every_dialogue_failed_reads_failed_at_every_door(researcher_client, dead_endpoint_audit):
    audit = dead_endpoint_audit
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match=rf"audit {audit.pk} failed: every one of its \d+ dialogues failed"):
        call_command("run_audit", str(audit.pk), "--inline", stdout=out, stderr=err)
    audit.refresh_from_db()
    n = audit.dialogues.count()
    assert n > 0 and audit.dialogues.filter(status=Dialogue.Status.FAILED).count() == n
    assert audit.status == Audit.Status.FINISHED  # no work remains: the stored status alone would say "finished"
    summary = out.getvalue()
    assert f"Audit {audit.pk} failed: 0 done, {n} failed" in summary and "finished" not in summary

    # The API: `status` says no work remains, `outcome` how it ended — on the audit, in the list, and in progress.
    detail = researcher_client.get(f"/api/audits/{audit.pk}/").json()
    assert (detail["status"], detail["outcome"]) == ("finished", "failed")
    listed = {row["id"]: row for row in researcher_client.get("/api/audits/").json()["results"]}
    assert listed[audit.pk]["outcome"] == "failed"
    assert researcher_client.get(f"/api/audits/{audit.pk}/progress/").json()["outcome"] == "failed"

    # The pages: the run page's live panel, the dashboard and the audits list, each in red.
    panel = researcher_client.get(reverse("audits:audit-detail", args=[audit.pk])).content.decode()
    assert 'data-outcome="failed"' in panel and '<strong id="audit-status" class="bad">failed</strong>' in panel
    dashboard = researcher_client.get(reverse("audits:dashboard")).content.decode()
    assert '<td class="bad">Failed</td>' in dashboard
    runs = researcher_client.get(reverse("audits:audits")).content.decode()
    assert '<td class="bad" data-outcome>Failed</td>' in runs and ">Finished<" not in runs


@pytest.mark.django_db
def test_every_dialogue_done_reads_finished_and_some_failed_reads_finished_with_failures(researcher_client):
    sim = simulation_endpoint("all in one")
    audit = audit_create(
        name="fine",
        tutors=[sim],
        student_endpoint=sim,
        judge_endpoint=sim,
        questions=make_questions(2, prefix="fine"),
        conditions=explicit_conditions(),
    )
    out = io.StringIO()
    call_command("run_audit", str(audit.pk), "--inline", stdout=out, stderr=io.StringIO())
    n = audit.dialogues.count()
    assert f"Audit {audit.pk} finished: {n} done, 0 failed" in out.getvalue()
    assert researcher_client.get(f"/api/audits/{audit.pk}/").json()["outcome"] == "finished"

    first = audit.dialogues.order_by("pk").first()
    Dialogue.objects.filter(pk=first.pk).update(status=Dialogue.Status.FAILED, error="tutor call failed: HTTP 500")
    assert researcher_client.get(f"/api/audits/{audit.pk}/").json()["outcome"] == "finished_with_failures"
    listed = {row["id"]: row for row in researcher_client.get("/api/audits/").json()["results"]}
    assert listed[audit.pk]["outcome"] == "finished_with_failures"
    runs = researcher_client.get(reverse("audits:audits")).content.decode()
    assert '<td class="warn" data-outcome>Finished with failures</td>' in runs
    # Resuming the finished audit sends nothing and reports the same outcome, exiting normally.
    out = io.StringIO()
    call_command("run_audit", str(audit.pk), "--inline", stdout=out, stderr=io.StringIO())
    assert f"Audit {audit.pk} finished with failures: {n - 1} done, 1 failed" in out.getvalue()


@pytest.mark.django_db
def test_a_draft_audit_reads_draft_in_the_api(researcher_client, dead_endpoint_audit):
    detail = researcher_client.get(f"/api/audits/{dead_endpoint_audit.pk}/").json()
    assert (detail["status"], detail["outcome"]) == ("draft", "draft")


# --- the connection test reports, never raises -------------------------------------------------------------------


@pytest.fixture
def openai_client_missing(monkeypatch):
    """The OpenAI provider module cannot be loaded, as in an install without aiohttp."""
    real_import = builtins.__import__

    def refusing_import(name, *args, **kwargs):
        if name == "audits.llm.openai_compat" or name == "aiohttp" or name.startswith("aiohttp."):
            raise ModuleNotFoundError("No module named 'aiohttp'", name="aiohttp")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refusing_import)


@pytest.mark.django_db
def test_a_client_that_cannot_be_loaded_is_a_stored_and_shown_failure(researcher_client, openai_client_missing):
    endpoint = openai_endpoint("tutor without its client", "http://127.0.0.1:9/v1")
    ok, message = endpoint_connection_test(endpoint=endpoint)
    assert ok is False
    assert "cannot load the OpenAI client" in message and "No module named 'aiohttp'" in message
    assert "install requirements.txt" in message
    endpoint.refresh_from_db()
    assert endpoint.last_test_ok is False and endpoint.last_test_message == message and endpoint.last_tested_at

    # The API answers 200 with the failure; the page's test button shows it, and the endpoints list keeps it.
    answer = researcher_client.post(f"/api/model-endpoints/{endpoint.pk}/test-connection/")
    assert answer.status_code == 200
    assert (answer.json()["ok"], answer.json()["message"]) == (False, message)
    fragment = researcher_client.post(reverse("audits:endpoint-test", args=[endpoint.pk]), HTTP_HX_REQUEST="true")
    assert fragment.status_code == 200 and "No module named &#x27;aiohttp&#x27;" in fragment.content.decode()
    listing = researcher_client.get(reverse("audits:endpoints")).content.decode()
    assert "Failed: this installation cannot load the OpenAI client" in listing


@pytest.mark.django_db
def test_any_error_of_the_check_is_a_stored_failure_naming_it(monkeypatch):
    import audits.llm.openai_compat as openai_compat

    async def broken_check(config):
        raise RuntimeError("the event loop is closed")

    monkeypatch.setattr(openai_compat, "endpoint_connection_check", broken_check)
    endpoint = openai_endpoint("broken tutor", "http://127.0.0.1:9/v1")
    ok, message = endpoint_connection_test(endpoint=endpoint)
    assert ok is False and message == "the connection test failed: RuntimeError: the event loop is closed"
    assert ModelEndpoint.objects.get(pk=endpoint.pk).last_test_message == message
