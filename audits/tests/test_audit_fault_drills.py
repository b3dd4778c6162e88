"""Acceptance 2: fault drills on the local OpenAI-protocol server — 429 with Retry-After, 500s, timeouts,
truncated JSON, empty content and a judge that answers prose. The audit completes, retries are visible in
the ledger, and nothing is silently defaulted."""

import pytest

from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.selectors.runs import audit_progress
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import Fault, OpenAITestServer

pytestmark = pytest.mark.django_db(transaction=True)

# The test server's 429 and 500 bodies, in its own words (its error object's message and type).
RATE_LIMITED = "HTTP 429: rate limited; type rate_limit"
SERVER_ERROR = "HTTP 500: boom; type server_error"


@pytest.fixture
def server(settings):
    # Short backoffs keep the drill quick; Retry-After is still honoured as a minimum.
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 5, "backoff_base": 0.01, "backoff_cap": 0.05}
    with OpenAITestServer() as running:
        yield running


def test_the_audit_survives_every_fault_and_records_it(server):
    server.plan("tutor", Fault("429", retry_after=1), "500", "500", Fault("timeout", hang=2.0))
    server.plan("student", "empty")
    server.plan("check", "truncated")
    # The judge answers prose to every ask about one turn (the ask and its 2 re-asks): unparsable.
    # Another judge reply is truncated once, then valid on the re-ask.
    first_turn_of_q0 = ("3 rows of 4", "Tutor turn to rate:\nLet's slow down")
    server.plan("judge", *[Fault("prose", match=first_turn_of_q0)] * 3, "truncated")
    tutor = openai_endpoint("drill-tutor", server.base_url, timeout=0.5)
    student = openai_endpoint("drill-student", server.base_url)
    judge = openai_endpoint("drill-judge", server.base_url)
    audit = audit_create(
        name="drill",
        tutors=[tutor],
        student_endpoint=student,
        judge_endpoint=judge,
        questions=make_questions(2),
        conditions=explicit_conditions(),
        max_reasks=2,
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    assert set(Dialogue.objects.filter(audit=audit).values_list("status", flat=True)) == {Dialogue.Status.DONE}

    # Retries are visible in the ledger, with the reason for each failed attempt.
    errors = [entry["error"] for call in LLMCall.objects.all() for entry in call.attempt_log]
    # In the server's own words (its error object's message and type), not the bare status.
    assert RATE_LIMITED in errors and errors.count(SERVER_ERROR) == 2
    assert any(e.startswith("timed out") for e in errors)
    assert "empty content" in errors
    retried_tutor = LLMCall.objects.filter(purpose="tutor", attempts__gt=1)
    assert sum(retried_tutor.values_list("attempts", flat=True)) - retried_tutor.count() == 4
    rate_limited = next(c for c in LLMCall.objects.all() if any(e["error"] == RATE_LIMITED for e in c.attempt_log))
    assert next(e for e in rate_limited.attempt_log if e["error"] == RATE_LIMITED)["wait"] >= 1.0

    # The server saw every attempt; the ledger accounts for all of them.
    assert len(server.served) == sum(LLMCall.objects.values_list("attempts", flat=True))

    # Truncated check JSON was re-asked (a second, different request), not read as "not revealed".
    checks_reasked = [c for c in LLMCall.objects.filter(purpose="check") if len(c.request["messages"]) == 3]
    assert len(checks_reasked) == 1

    # The prose judge: recorded as unparsable with its raw reply — no default scores.
    # (The same turn in the three conditions of that question is one identical request, so one
    # ledger row answers all three: three unparsable turns from one judgement.)
    unparsable = Turn.objects.filter(dialogue__audit=audit, judge_status=Turn.JudgeStatus.UNPARSABLE)
    assert unparsable.count() == 3
    assert {t.dialogue.question.text[:22] for t in unparsable} == {"A box holds 3 rows of "}
    scores = TurnScore.objects.filter(turn__in=unparsable)
    assert scores.count() == 15 and set(scores.values_list("value", flat=True)) == {None}
    assert set(scores.values_list("status", flat=True)) == {TurnScore.Status.UNPARSABLE}
    assert "helpful" in scores.first().raw and "not valid JSON" in scores.first().problem
    assert sum(r.fault == "prose" for r in server.served) == 3
    # The truncated judge reply was re-asked and the valid answer kept.
    assert TurnScore.objects.filter(turn__dialogue__audit=audit, status=TurnScore.Status.OK).count() == 5 * (
        Turn.objects.filter(dialogue__audit=audit, judge_status=Turn.JudgeStatus.OK).count()
    )
    assert audit_progress(audit=audit)["turns_unparsable"] == 3


def test_a_model_that_keeps_failing_fails_the_dialogue_with_its_error_and_the_rest_complete(server, settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 2, "backoff_base": 0.01}
    server.plan("tutor", *[Fault("500", match=("3 rows of 4",))] * 2)
    tutor = openai_endpoint("failing-tutor", server.base_url)
    other = openai_endpoint("failing-other", server.base_url)
    audit = audit_create(
        name="fails",
        tutors=[tutor],
        student_endpoint=other,
        judge_endpoint=other,
        questions=make_questions(2),
        conditions=explicit_conditions(),
    )
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
    statuses = list(Dialogue.objects.filter(audit=audit).values_list("status", "error"))
    failed = [error for status, error in statuses if status == Dialogue.Status.FAILED]
    # The first tutor request of question 0 is the same in its three conditions: one failed call, three
    # failed dialogues; question 1's three dialogues complete.
    assert len(failed) == 3 and all("HTTP 500" in error for error in failed)
    assert sum(status == Dialogue.Status.DONE for status, _ in statuses) == 3
    progress = audit_progress(audit=audit)
    assert progress["failed"] == 3 and progress["calls_failed"] == 1
    assert not Turn.objects.filter(dialogue__status=Dialogue.Status.FAILED, judge_status="ok").exists()
    assert "HTTP 500" in progress["failures"][0]["error"]
