"""A judge-validation judge run by batch shows on the project's page and in its API how it ended, with the
cause and the batch's validation errors in the provider's words; the page's cancel button ends a queued run."""

from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from annotation.judge_validation.importing import labelled_file_import
from annotation.judge_validation.judging import judge_validation_run
from audits.models import JudgeRun
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_batch_server import BatchTestServer

SAMPLE = Path(settings.BASE_DIR) / "samples" / "mrbench_style_sample.json"

pytestmark = pytest.mark.django_db


@pytest.fixture
def enqueued(monkeypatch):
    from audits.services import judge_runs

    sent = []
    monkeypatch.setattr(judge_runs, "_enqueue", lambda run, countdown=None: sent.append(run.pk))
    return sent


def test_a_rejected_batch_run_shows_its_cause_and_a_queued_run_is_cancelled(researcher_client, enqueued, settings):
    settings.JUDGE_BATCH_POLL_SECONDS = 0.05
    project = labelled_file_import(data=SAMPLE.read_bytes(), filename=SAMPLE.name, name="batch truth page")
    judges_url = reverse("annotation-jv-judges", args=[project.pk])
    page_url = reverse("annotation:judge-validation", args=[project.pk])
    cancel_url = reverse("annotation:judge-validation-action", args=[project.pk, "cancel-run"])
    with BatchTestServer(batch_seconds=0.1) as server:
        server.batch.validation_errors = [
            {"code": "token_limit_exceeded", "message": "Enqueued token limit reached.", "param": None, "line": None}
        ]
        judge = openai_endpoint("rejected judge", server.base_url, batch_capable=True)
        run = researcher_client.post(judges_url, {"judge_endpoint": judge.pk}, content_type="application/json")
        run = run.json()["run"]
        assert judge_validation_run(run_id=run["id"]) == JudgeRun.Status.FAILED

        [state] = [j["run"] for j in researcher_client.get(judges_url).json() if j["run"]]
        assert (state["status"], state["scored"], state["calls_sent"]) == ("failed", 0, 0)
        assert "token_limit_exceeded: Enqueued token limit reached." in state["cause"]
        page = researcher_client.get(page_url).content.decode()
        assert "failed: 8 of 8 turns processed" in page and "0 scored" in page
        assert "Cause: 8 of 8 turns not scored" in page and "<code>token_limit_exceeded</code>" in page

        # Run it again, and cancel it from the page before a worker takes it: nothing is sent.
        requests_before = server.batch_requests
        again = researcher_client.post(judges_url, {"judge_endpoint": judge.pk}, content_type="application/json")
        validation_id = again.json()["id"]
        assert (
            again.json()["run"]["status"] == "queued"
            and "Cancel the run" in researcher_client.get(page_url).content.decode()
        )
        researcher_client.post(cancel_url, {"validation": validation_id})
        cancelled = JudgeRun.objects.get(pk=again.json()["run"]["id"])
        assert cancelled.status == "failed" and "cancelled on request before it started" in cancelled.error
        assert judge_validation_run(run_id=cancelled.pk) == "skipped" and server.batch_requests == requests_before
        # A run that has ended cannot be cancelled again; the page says why.
        answer = researcher_client.post(cancel_url, {"validation": validation_id}, follow=True)
        assert "nothing to cancel" in answer.content.decode()
