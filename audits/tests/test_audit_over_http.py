"""Acceptance 1: over HTTP against a local OpenAI-protocol server, an audit completes; every tutor turn has
five scores (or a recorded unparsable status); the server saw exactly one request per ledger row."""

import json
from collections import Counter

import pytest

from audits.judge import METRICS
from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.services.audit_lifecycle import audit_create
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with OpenAITestServer() as running:
        yield running


def http_audit(server, name="over http", **options):
    tutor = openai_endpoint(f"{name}-tutor", server.base_url)
    student = openai_endpoint(f"{name}-student", server.base_url)
    judge = openai_endpoint(f"{name}-judge", server.base_url)
    return audit_create(
        name=name,
        tutors=[tutor],
        student_endpoint=student,
        judge_endpoint=judge,
        questions=make_questions(3),
        conditions=explicit_conditions(),
        **options,
    )


def test_an_audit_completes_over_http_and_the_ledger_matches_the_server(server):
    audit = http_audit(server)
    assert audit_run_inline(audit=audit) == Audit.Status.FINISHED

    dialogues = Dialogue.objects.filter(audit=audit)
    assert dialogues.count() == 3 * 3  # 3 questions × (control + 2 first-language levels)
    assert set(dialogues.values_list("status", flat=True)) == {Dialogue.Status.DONE}
    assert set(dialogues.values_list("end_reason", flat=True)) == {"revealed"}

    for turn in Turn.objects.filter(dialogue__audit=audit, role="tutor"):
        scores = TurnScore.objects.filter(turn=turn)
        if turn.judge_status == Turn.JudgeStatus.OK:
            assert sorted(scores.values_list("metric", flat=True)) == sorted(METRICS)
            assert all(value in (-1, 0, 1, 2) for value in scores.values_list("value", flat=True))
        else:
            assert turn.judge_status == Turn.JudgeStatus.UNPARSABLE
            assert set(scores.values_list("value", flat=True)) == {None}

    # One request per ledger row, and every row's request was served exactly once.
    served = server.served
    assert len(served) == LLMCall.objects.count()
    assert all(r.status == 200 for r in served)
    assert Counter(r.purpose for r in served) == Counter(LLMCall.objects.values_list("purpose", flat=True))
    assert len({r.body_hash for r in served}) == len(served)


def test_the_ledger_stores_what_was_sent_and_no_headers(server):
    audit = http_audit(server, name="ledger shape")
    audit_run_inline(audit=audit)
    call = LLMCall.objects.filter(purpose="judge").first()
    assert call.status == LLMCall.Status.OK and call.attempts == 1
    assert call.request["messages"][0]["role"] == "user"
    assert "mistake_recognize" in json.dumps(call.request)
    assert call.prompt_tokens > 0 and call.first_audit_id == audit.pk
