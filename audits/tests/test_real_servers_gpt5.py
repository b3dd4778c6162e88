"""OpenAI's reasoning models (GPT-5, o-series) as the API answers them: 400 for a temperature other than 1 and
for `max_tokens`, `max_completion_tokens` and `reasoning_effort` accepted, reasoning tokens reported inside the
completion tokens.

An endpoint set as the README says (the model's name, every parameter on "auto") runs an audit with no failed
dialogue; set wrong, the error quotes the server and says what to change on the run page, in the API and in
the connection test.
"""

import pytest

from audits.models import Audit, Dialogue, LLMCall, Turn
from audits.services.dialogue_batches import audit_run_inline
from audits.tests.server_emulations import (
    MAX_TOKENS_MESSAGE,
    REASONING_EFFORT_TOKENS,
    EmulatedServer,
    api_progress,
    connection_tests,
    emulated_endpoint,
    run_page,
    small_audit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def settle(settings):
    settings.AUDIT_RETRY_POLICY = {"max_attempts": 5, "backoff_base": 0.01, "backoff_cap": 0.05}


@pytest.mark.parametrize(
    "fields, reasoning_tokens",
    [
        ({}, 48),  # the model's name and nothing else
        ({"max_tokens": 4000, "reasoning_effort": "low"}, REASONING_EFFORT_TOKENS["low"]),
    ],
    ids=["defaults", "budget-and-effort"],
)
def test_gpt5_set_as_the_readme_says_runs_an_audit_without_failures(fields, reasoning_tokens, settle):
    with EmulatedServer("gpt5") as server:
        endpoint = emulated_endpoint("gpt-5-mini", server, model="gpt-5-mini", **fields)
        audit = small_audit("gpt-5", tutor=endpoint)
        assert audit_run_inline(audit=audit) == Audit.Status.FINISHED
        sent = server.completions()

    dialogues = Dialogue.objects.filter(audit=audit)
    assert dialogues.count() == 2 and not dialogues.filter(status=Dialogue.Status.FAILED).exists()
    assert set(Turn.objects.filter(dialogue__audit=audit, role="tutor").values_list("judge_status", flat=True)) == {
        Turn.JudgeStatus.OK
    }
    # What was sent: no temperature, no max_tokens; the budget by the name the model takes; the effort.
    assert {r.status for r in sent} == {200}
    for request in sent:
        assert "temperature" not in request.body and "max_tokens" not in request.body
        assert request.body.get("max_completion_tokens") == fields.get("max_tokens")
        assert request.body.get("reasoning_effort") == fields.get("reasoning_effort")
    # The ledger keeps the parameters as sent and the reasoning tokens the server reported.
    calls = list(LLMCall.objects.filter(first_audit=audit))
    assert len(calls) == len(sent)
    for call in calls:
        assert "temperature" not in call.request["params"] and "max_tokens" not in call.request["params"]
        assert call.reasoning_tokens == reasoning_tokens
        assert call.completion_tokens == reasoning_tokens + len(call.response_text.split())
        assert call.finish_reason == "stop"


WRONG_SETTINGS = [
    pytest.param(
        {"temperature_parameter": "send"},
        "'temperature' does not support 0 with this model. Only the default (1) value is supported.",
        "omit",
        id="temperature-sent",
    ),
    pytest.param(
        {"token_limit_parameter": "max_tokens", "max_tokens": 500},
        MAX_TOKENS_MESSAGE,
        "token limit parameter",
        id="max-tokens-sent",
    ),
]


@pytest.mark.parametrize("fields, server_words, hint", WRONG_SETTINGS)
def test_gpt5_set_wrong_quotes_the_server_and_says_what_to_change(
    fields, server_words, hint, settle, researcher_client
):
    with EmulatedServer("gpt5") as server:
        endpoint = emulated_endpoint("gpt-5-mini", server, model="gpt-5-mini", **fields)
        audit = small_audit("gpt-5 set wrong", tutor=endpoint)
        audit_run_inline(audit=audit)
        sent = server.completions()
        doors = connection_tests(researcher_client, endpoint)

    # A refusal is not retried: the server saw each distinct request once.
    audit_requests = [r for r in sent if r.purpose != "connection-test"]
    assert len(audit_requests) == len({r.key for r in audit_requests}) == LLMCall.objects.count()
    assert {r.status for r in sent} == {400}

    errors = set(Dialogue.objects.filter(audit=audit).values_list("status", "error"))
    assert {status for status, _ in errors} == {Dialogue.Status.FAILED}
    for _, error in errors:
        assert server_words in error and hint in error
    assert "HTTP 400" in next(iter(errors))[1]
    for where, text in {
        "run page": run_page(researcher_client, audit),
        "API": api_progress(researcher_client, audit),
    }.items():
        assert server_words in text, where
        assert hint in text, where
    for door, message in doors.items():
        assert server_words in message, door
        assert hint in message, door


def test_an_effort_the_model_does_not_take_is_quoted_with_what_to_change(researcher_client):
    with EmulatedServer("gpt5") as server:
        # An effort given as an extra parameter is sent as it is: the server is the judge of it.
        endpoint = emulated_endpoint("o3-mini", server, model="o3-mini", extra_params={"reasoning_effort": "extreme"})
        doors = connection_tests(researcher_client, endpoint)
        sent = server.completions()
    assert {r.body["reasoning_effort"] for r in sent} == {"extreme"}
    for door, message in doors.items():
        assert "'reasoning_effort' does not support 'extreme'" in message, door
        assert "reasoning effort" in message, door
