"""Every malformed reply is a retryable attempt, recorded in the ledger, and never an exception out of the
client: bodies cut short, HTML with status 200, JSON that is not a chat completion, no choices, and
errors nobody foresaw. An answer the caller rejects as unparsable is never served again."""

import asyncio

import pytest

from audits.llm.calls import STATUS_UNPARSABLE, CallRequest, EndpointConfig, MemoryLedger, attempt_key
from audits.llm.client import LLMClient, RetryPolicy
from audits.tests.fault_proxy import FaultProxy
from audits.tests.openai_server import OpenAITestServer


@pytest.fixture(scope="module")
def proxy():
    with OpenAITestServer() as server, FaultProxy(server.base_url) as running:
        yield running


async def no_sleep(seconds):
    return None


def endpoint(base_url, **overrides):
    values = {"key": "m1", "provider": "openai", "model": "test-model", "base_url": base_url, "timeout": 5.0}
    return EndpointConfig(**{**values, **overrides})


def ask(client, request):
    async def go():
        try:
            return await client.complete(request)
        finally:
            await client.close()

    return asyncio.run(go())


def request(base_url, text, purpose="tutor"):
    return CallRequest(endpoint=endpoint(base_url), purpose=purpose, messages=[{"role": "user", "content": text}])


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("truncated", "the body is not valid JSON"),
        ("html", "the body is not JSON but text: '<html>"),
        ("not_completion", "the body is not a chat completion"),
        ("no_choices", "the response had no choices"),
    ],
)
def test_a_malformed_body_is_retried_and_logged(proxy, fault, error):
    proxy.plan(fault)
    ledger = MemoryLedger()
    result = ask(LLMClient(ledger, sleep=no_sleep), request(proxy.base_url, f"malformed {fault}"))
    assert result.ok and result.attempts == 2 and result.text
    (row,) = ledger.rows.values()
    assert row["attempt_log"][0]["error"].startswith(error) and row["attempt_log"][0]["retry"] is True
    # The model the server said answered is kept with the call.
    assert row["reported_model"] == "test-model"


def test_a_body_that_stays_malformed_fails_with_a_clear_error_after_max_attempts(proxy):
    proxy.plan("html", "truncated", "html")
    ledger = MemoryLedger()
    client = LLMClient(ledger, sleep=no_sleep, retry=RetryPolicy(max_attempts=3))
    result = ask(client, request(proxy.base_url, "always malformed"))
    assert not result.ok and result.text is None
    assert result.error.startswith("the body is not JSON but text") and "gave up after 3 attempts" in result.error
    (row,) = ledger.rows.values()
    assert row["status"] == "failed" and row["attempts"] == 3 and len(row["attempt_log"]) == 3


class Exploding:
    """A provider whose reply handling breaks in a way no rule foresaw, then recovers."""

    def __init__(self, endpoint):
        self.calls = 0

    async def send(self, request):
        from audits.llm.calls import ProviderReply

        self.calls += 1
        if self.calls == 1:
            raise KeyError("choices")
        return ProviderReply("fine", model="other-model")

    async def close(self):
        return None


def test_an_unforeseen_exception_is_a_failed_attempt_not_a_lost_call():
    ledger = MemoryLedger()
    client = LLMClient(ledger, sleep=no_sleep, provider_factory=Exploding)
    result = ask(client, request("http://unused.invalid/v1", "explode"))
    assert result.ok and result.text == "fine" and result.attempts == 2
    (row,) = ledger.rows.values()
    assert row["attempt_log"][0]["error"] == "unexpected reply error: KeyError: 'choices'"
    assert row["reported_model"] == "other-model"


def test_a_rejected_answer_is_never_served_again(proxy):
    ledger = MemoryLedger()
    first_request = request(proxy.base_url, "judge this", purpose="judge")
    served = len(proxy.served)
    first = ask(LLMClient(ledger), first_request)
    ask_client = LLMClient(ledger)
    asyncio.run(ask_client.reject(first, "the reply is not valid JSON"))
    again = ask(LLMClient(ledger), first_request)
    # Asked afresh under the next attempt key; the rejected answer stays on record, unparsable.
    assert not again.cached and again.call_id != first.call_id and len(proxy.served) == served + 2
    key = first_request.request_hash()
    assert ledger.rows[key]["status"] == STATUS_UNPARSABLE and ledger.rows[key]["text"] == first.text
    assert ledger.rows[attempt_key(key, 1)]["status"] == "ok"
    # The good answer of the new round is served from then on.
    third = ask(LLMClient(ledger), first_request)
    assert third.cached and third.call_id == again.call_id and len(proxy.served) == served + 2
