"""Batch judging tells how a run ended, against the local Files + Batches server: a batch rejected at
validation keeps the provider's reasons, a server without the Batch API is refused in words (or judged
online when the endpoint says so) and nothing unsent counts as sent, an expired remainder is sent again
within the run (and given up, saying so, after MAX_EXPIRY_RESUBMISSIONS), and a batch cancelled — at the
provider, or through the API — says so in the run's outcome."""

import threading
import time
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from audits.llm.batch import MAX_EXPIRY_RESUBMISSIONS
from audits.models import JudgeBatch, JudgeRun, LLMCall, ModelEndpoint, TurnScore
from audits.services.judge_runs import audit_rejudge_open, audit_rejudge_run
from audits.tests.test_batch_judging import finished_audit  # noqa: F401  (the shared fixture)

pytestmark = pytest.mark.django_db


def _run(audit, judge, rubric) -> JudgeRun:
    run = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
    audit_rejudge_run(run_id=run.pk)
    run.refresh_from_db()
    return run


def test_a_batch_rejected_at_validation_keeps_the_providers_reasons(finished_audit, researcher_client):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.validation_errors = [
        {"code": "token_limit_exceeded", "message": "Enqueued token limit reached for gpt-4o.", "param": None},
        {"code": "model_not_found", "message": "The model 'gpt-9' does not exist.", "param": "body.model", "line": 2},
    ]
    run = _run(audit, judge, rubric)

    assert run.status == JudgeRun.Status.FAILED and run.scored == 0 and run.calls_sent == 0
    assert "token_limit_exceeded: Enqueued token limit reached for gpt-4o." in run.error
    assert "model_not_found: The model 'gpt-9' does not exist. (line 2, param body.model)" in run.error
    [batch] = JudgeBatch.objects.filter(run=run)
    assert batch.final_status == "failed" and batch.unrun == batch.lines
    assert [e["code"] for e in batch.validation_errors] == ["token_limit_exceeded", "model_not_found"]
    errors = list(LLMCall.objects.filter(batch=batch).order_by("request_hash").values_list("error", flat=True))
    assert len(errors) == batch.lines and not any("missing from the output" in e for e in errors)
    # The line the provider named has its own reason; every other line has the batch's.
    assert "rejected at validation: model_not_found" in errors[1]
    assert all("token_limit_exceeded" in e for i, e in enumerate(errors) if i != 1)
    # The API shows the outcome, its cause and the batch's reasons.
    shown = researcher_client.get(f"/api/judge-runs/{run.pk}/").json()
    assert (shown["status"], shown["scored"]) == ("failed", 0) and "token_limit_exceeded" in shown["cause"]
    assert shown["batches"][0]["validation_errors"][1]["line"] == 2


def test_a_server_without_the_batch_api_is_refused_in_words_or_judged_online(finished_audit):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.batch_api = False
    chat_before = len(server.served)

    out = StringIO()
    with pytest.raises(CommandError, match="no turn was scored"):
        call_command("run_audit", audit.pk, rubric=rubric.pk, judge=judge.pk, inline=True, stdout=out)
    run = JudgeRun.objects.get(endpoint=judge)
    assert (run.status, run.calls_sent, run.scored) == ("failed", 0, 0)
    assert "has no Files and Batch API" in run.error and "HTTP 404: Not Found" in run.error
    assert "failed." in out.getvalue() and "Cause: refused: batch-judge has no Files and Batch API" in out.getvalue()
    assert not JudgeBatch.objects.filter(run=run).exists() and len(server.served) == chat_before

    # With the fallback to direct calls, the same run is judged online and says so.
    ModelEndpoint.objects.filter(pk=judge.pk).update(batch_fallback="direct")
    run = _run(audit, judge, rubric)
    sent = len(server.served) - chat_before
    assert run.status == JudgeRun.Status.DONE and not run.via_batch and run.scored == run.total
    assert run.calls_sent == sent > 0
    assert run.error.startswith("judged by direct calls at the online price: batch-judge has no Files and Batch API")


def test_an_upload_the_provider_refuses_is_the_runs_stated_cause(finished_audit):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.upload_status = 404
    run = _run(audit, judge, rubric)

    [batch] = JudgeBatch.objects.filter(run=run)
    assert batch.provider_batch_id == "" and batch.unrun == batch.lines
    assert (run.status, run.scored, run.calls_sent) == ("failed", 0, 0)
    assert "batch 1 (never created at the provider): upload the batch file: HTTP 404: Files are not accepted here." in (
        run.error
    )


def test_an_expired_half_is_sent_again_within_the_run(finished_audit):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.fates = [("expire", 3)]
    run = _run(audit, judge, rubric)

    first, second = JudgeBatch.objects.filter(run=run).order_by("pk")
    assert (first.final_status, first.answered, first.unrun) == ("expired", 3, first.lines - 3)
    assert second.final_status == "completed" and second.lines == first.lines - 3
    assert set(second.requests) < set(first.requests)
    assert run.status == JudgeRun.Status.DONE and run.scored == run.total and run.error == ""
    assert run.calls_sent == first.lines and set(server.lines_answered.values()) == {1}
    # Answers of the expired batch are kept at the batch price.
    assert LLMCall.objects.filter(batch=first, status="ok", price_factor=0.5).count() == 3


def test_a_remainder_that_keeps_expiring_is_given_up_saying_so(finished_audit):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.fates = [("expire", 0)] * (MAX_EXPIRY_RESUBMISSIONS + 1)
    run = _run(audit, judge, rubric)

    batches = list(JudgeBatch.objects.filter(run=run))
    assert len(batches) == MAX_EXPIRY_RESUBMISSIONS + 1 == server.batches_created
    assert run.status == JudgeRun.Status.FAILED and run.calls_sent == 0
    assert f"expired {MAX_EXPIRY_RESUBMISSIONS + 1} times (sent again at most {MAX_EXPIRY_RESUBMISSIONS} times" in (
        run.error
    )


def test_a_batch_cancelled_at_the_provider_says_so(finished_audit):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.fates = [("cancel", 2)]
    run = _run(audit, judge, rubric)

    [batch] = JudgeBatch.objects.filter(run=run)
    assert (batch.final_status, batch.answered, batch.unrun) == ("cancelled", 2, batch.lines - 2)
    assert run.status == JudgeRun.Status.DONE_WITH_FAILURES and 0 < run.scored < run.total
    assert f"({batch.provider_batch_id}) was cancelled at the provider with {batch.lines - 2} of" in run.error
    assert run.calls_sent == 2
    failed = TurnScore.objects.filter(turn__dialogue__audit=audit, rubric=rubric, status="failed")
    assert failed.exists() and all(
        "was cancelled at the provider" in p for p in failed.values_list("problem", flat=True)
    )


@pytest.mark.django_db(transaction=True)  # the run goes on another thread, which must see committed rows
def test_a_running_batch_is_cancelled_at_the_provider_through_the_api(finished_audit, researcher_client):  # noqa: F811
    server, audit, judge, rubric = finished_audit
    server.batch.batch_seconds = 60.0
    server.batch.cancel_keep = 1
    run = audit_rejudge_open(audit=audit, judge_template=rubric, judge_endpoint=judge)
    worker = threading.Thread(target=audit_rejudge_run, kwargs={"run_id": run.pk})
    worker.start()
    try:
        deadline = time.monotonic() + 20
        while not JudgeBatch.objects.filter(run=run).exclude(provider_batch_id="").exists():
            assert time.monotonic() < deadline, "the batch was never created"
            time.sleep(0.05)
        answer = researcher_client.post(f"/api/judge-runs/{run.pk}/cancel/")
        assert answer.status_code == 200 and answer.json()["cancel_requested_at"]
    finally:
        worker.join(30)
    assert not worker.is_alive()
    run.refresh_from_db()
    [batch] = JudgeBatch.objects.filter(run=run)
    assert batch.final_status == "cancelled" and batch.answered == 1
    assert run.status == JudgeRun.Status.DONE_WITH_FAILURES and "cancelled on request" in run.error
    assert "was cancelled at the provider" in run.error
    # A finished run cannot be cancelled again.
    again = researcher_client.post(f"/api/judge-runs/{run.pk}/cancel/")
    assert again.status_code == 409 and "nothing to cancel" in again.json()["detail"]
