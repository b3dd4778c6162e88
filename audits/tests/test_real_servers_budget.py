"""A token budget a reasoning model uses up before it answers: GPT-5 answers `content: ""` with `finish_reason:
"length"`, and bills the tokens. Asked again the same way it answers the same, so the request is sent once,
its error names the cause, and what the server billed is on the ledger row — for every billed attempt."""

import pytest

from audits.models import Audit, Dialogue, LLMCall
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.openai_server import tutor_reply
from audits.tests.server_emulations import EmulatedServer, emulated_endpoint, small_audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def five_attempts(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 5, "backoff_base": 0.01, "backoff_cap": 0.05}


def test_a_used_up_budget_is_sent_once_named_as_the_cause_and_billed(five_attempts, researcher_client):
    with EmulatedServer("gpt5", reasoning_tokens=48) as server:
        tutor = emulated_endpoint("gpt-5 tutor, small budget", server, model="gpt-5-mini", max_tokens=16)
        other = emulated_endpoint("gpt-5 student and judge", server, model="gpt-5-mini", max_tokens=4000)
        audit = small_audit("budget used up", tutor=tutor, student=other, judge=other)
        audit_run_inline(audit=audit)
        tutor_requests = [r for r in server.completions() if r.body.get("max_completion_tokens") == 16]

    # One request for each ledger row, not one per allowed attempt (no temperature is sent, so each dialogue's
    # request is a sample of its own: one row each).
    rows = list(LLMCall.objects.filter(endpoint=tutor))
    assert rows and len(tutor_requests) == len(rows)
    assert {r.answered for r in tutor_requests} == {"length"}
    for row in rows:
        assert row.status == LLMCall.Status.FAILED and row.attempts == 1
        # Billed: the whole budget, all of it reasoning.
        assert (row.completion_tokens, row.reasoning_tokens) == (16, 16)
        assert row.prompt_tokens > 0
        assert "budget" in row.error and "16" in row.error

    failed = Dialogue.objects.filter(audit=audit)
    assert {d.status for d in failed} == {Dialogue.Status.FAILED}
    for dialogue in failed:
        assert "budget" in dialogue.error and "16" in dialogue.error
    # The run's cost counts the billed tokens of the failed calls too.
    progress = researcher_client.get(f"/api/audits/{audit.pk}/progress/").json()
    assert progress["completion_tokens"] >= 16 * len(rows)


def test_a_budget_just_large_enough_for_the_reasoning_runs(five_attempts):
    with EmulatedServer("gpt5", reasoning_tokens=48) as server:
        endpoint = emulated_endpoint("gpt-5, enough budget", server, model="gpt-5-mini", max_tokens=200)
        audit = small_audit("budget enough", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        assert {r.answered for r in server.completions()} == {"reply"}
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()


def test_every_billed_attempt_is_counted_on_the_row(five_attempts):
    with EmulatedServer("openai") as server:
        # The first tutor request is answered with nothing in it (billed 37 tokens), then asked again.
        server.fail("empty_billed", times=1, purpose="tutor")
        endpoint = emulated_endpoint("empty once", server)
        audit = small_audit("billed twice", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        empty = [r for r in server.completions() if r.answered == "empty_billed"]

    assert len(empty) == 1
    row = LLMCall.objects.get(request_hash__isnull=False, purpose="tutor", attempts=2)
    assert row.status == LLMCall.Status.OK and row.response_text == tutor_reply([])
    assert row.completion_tokens == 37 + len(tutor_reply([]).split())
    assert not Dialogue.objects.filter(audit=audit).exclude(status=Dialogue.Status.DONE).exists()
