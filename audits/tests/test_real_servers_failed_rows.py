"""A call that failed because the token budget ran out keeps on its ledger row what the server said: the finish
reason ("length") and the reasoning the model produced before it was cut off, apart from the reply, as an
answered call does — so the transcript page can show why it failed."""

import pytest

from audits.models import LLMCall
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.server_emulations import REASONING_MARK, EmulatedServer, emulated_endpoint, small_audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def five_attempts(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 5, "backoff_base": 0.01, "backoff_cap": 0.05}


@pytest.mark.parametrize("parser", [False, True], ids=["think-tag-unclosed", "vllm-parser-content-null"])
def test_a_reply_cut_off_in_its_reasoning_keeps_the_reasoning_and_finish_reason_on_its_row(parser, five_attempts):
    with EmulatedServer("truncated", parser=parser) as thinking, EmulatedServer("openai") as plain:
        tutor = emulated_endpoint("cut-off tutor", thinking, max_tokens=64)
        other = emulated_endpoint("plain student and judge", plain)
        audit_run_inline(audit=small_audit("cut off", tutor=tutor, student=other, judge=other))
    rows = list(LLMCall.objects.filter(endpoint=tutor))
    assert rows
    for row in rows:
        assert row.status == LLMCall.Status.FAILED
        assert row.finish_reason == "length"
        assert REASONING_MARK in row.reasoning and "think>" not in row.reasoning
        assert REASONING_MARK not in (row.response_text or "") and REASONING_MARK not in row.error


def test_a_used_up_gpt5_budget_is_recorded_as_such_on_its_row(five_attempts):
    with EmulatedServer("gpt5", reasoning_tokens=48) as server:
        tutor = emulated_endpoint("gpt-5 tutor, small budget", server, model="gpt-5-mini", max_tokens=16)
        other = emulated_endpoint("gpt-5 student and judge", server, model="gpt-5-mini", max_tokens=4000)
        audit_run_inline(audit=small_audit("budget row", tutor=tutor, student=other, judge=other))
    rows = list(LLMCall.objects.filter(endpoint=tutor))
    assert rows and {(row.finish_reason, row.reasoning_tokens) for row in rows} == {("length", 16)}
