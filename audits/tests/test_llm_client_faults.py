"""The client over HTTP against the local OpenAI-protocol server: retries, Retry-After, failures, ledger."""

import asyncio
import logging

import pytest

from audits.llm.calls import CallRequest, EndpointConfig, MemoryLedger
from audits.llm.client import LLMClient, RetryPolicy
from audits.tests.openai_server import Fault, OpenAITestServer


@pytest.fixture
def server():
    with OpenAITestServer() as running:
        yield running


class RecordedSleep:
    """Backoff waits are recorded instead of slept, so the test is not timed."""

    def __init__(self):
        self.waits = []

    async def __call__(self, seconds):
        self.waits.append(seconds)


def endpoint(server, **overrides):
    values = {"key": "e1", "provider": "openai", "model": "test-model", "base_url": server.base_url, "timeout": 5.0}
    return EndpointConfig(**{**values, **overrides})


def request(ep, text="hello", purpose="tutor"):
    return CallRequest(endpoint=ep, purpose=purpose, messages=[{"role": "user", "content": text}])


def complete(client, *requests):
    async def go():
        try:
            return await asyncio.gather(*(client.complete(r) for r in requests))
        finally:
            await client.close()

    return asyncio.run(go())


def test_429_waits_at_least_retry_after_then_succeeds(server):
    server.plan("tutor", Fault("429", retry_after=7))
    sleep, ledger = RecordedSleep(), MemoryLedger()
    (result,) = complete(LLMClient(ledger, sleep=sleep), request(endpoint(server)))
    assert result.ok and result.attempts == 2
    assert len(sleep.waits) == 1 and sleep.waits[0] >= 7
    row = next(iter(ledger.rows.values()))
    assert row["attempts"] == 2 and row["attempt_log"][0]["error"] == "HTTP 429: rate limited; type rate_limit"
    assert [r.status for r in server.served] == [429, 200]


def test_500s_are_retried_with_growing_backoff(server):
    server.plan("tutor", "500", "500")
    sleep = RecordedSleep()
    policy = RetryPolicy(max_attempts=5, backoff_base=1.0)
    (result,) = complete(LLMClient(MemoryLedger(), sleep=sleep, retry=policy), request(endpoint(server)))
    assert result.ok and result.attempts == 3
    assert all(0 <= w <= 1.0 * 2**i for i, w in enumerate(sleep.waits))


def test_a_timeout_is_retried(server):
    server.plan("tutor", Fault("timeout", hang=3))
    (result,) = complete(LLMClient(MemoryLedger(), sleep=RecordedSleep()), request(endpoint(server, timeout=0.5)))
    assert result.ok and result.attempts == 2


def test_empty_content_is_retried(server):
    server.plan("tutor", "empty")
    (result,) = complete(LLMClient(MemoryLedger(), sleep=RecordedSleep()), request(endpoint(server)))
    assert result.ok and result.text and result.attempts == 2


def test_attempts_are_bounded_then_the_failure_is_recorded(server):
    server.plan("tutor", *["500"] * 10)
    ledger = MemoryLedger()
    client = LLMClient(ledger, sleep=RecordedSleep(), retry=RetryPolicy(max_attempts=3))
    (result,) = complete(client, request(endpoint(server)))
    assert not result.ok and result.text is None
    assert result.error == "HTTP 500: boom; type server_error (gave up after 3 attempts)"
    row = next(iter(ledger.rows.values()))
    assert row["status"] == "failed" and row["attempts"] == 3
    assert len(server.served) == 3


def test_a_failed_call_is_tried_again_on_the_next_run(server):
    server.plan("tutor", *["500"] * 2)
    ledger = MemoryLedger()
    (first,) = complete(
        LLMClient(ledger, sleep=RecordedSleep(), retry=RetryPolicy(max_attempts=2)), request(endpoint(server))
    )
    (second,) = complete(LLMClient(ledger, sleep=RecordedSleep()), request(endpoint(server)))
    assert not first.ok and second.ok and second.call_id == first.call_id
    assert next(iter(ledger.rows.values()))["attempts"] == 3


def test_a_4xx_other_than_429_is_not_retried(server):
    bad = endpoint(server, base_url=server.base_url.replace("/v1", "/nowhere"))
    sleep = RecordedSleep()
    (result,) = complete(LLMClient(MemoryLedger(), sleep=sleep), request(bad))
    assert not result.ok and result.error == "HTTP 404: 404: Not Found" and sleep.waits == []


def test_a_retry_after_longer_than_the_limit_fails_instead_of_blocking(server):
    server.plan("tutor", Fault("429", retry_after=3600))
    client = LLMClient(MemoryLedger(), sleep=RecordedSleep(), retry=RetryPolicy(max_retry_after=60))
    (result,) = complete(client, request(endpoint(server)))
    assert not result.ok and "Retry-After" in result.error


def test_an_answered_call_is_never_sent_again(server):
    ledger = MemoryLedger()
    (first,) = complete(LLMClient(ledger), request(endpoint(server)))
    (again,) = complete(LLMClient(ledger), request(endpoint(server)))
    assert again.cached and again.text == first.text and again.call_id == first.call_id
    assert len(server.served) == 1


def test_identical_requests_in_flight_are_sent_once(server):
    ledger = MemoryLedger()
    results = complete(LLMClient(ledger), *[request(endpoint(server)) for _ in range(5)])
    assert len({r.call_id for r in results}) == 1 and len(server.served) == 1


def test_the_hash_ignores_the_key_and_database_id_but_not_the_model_or_temperature(server):
    base = request(endpoint(server, api_key_env="KEY_A", endpoint_id=1))
    same = request(endpoint(server, api_key_env="KEY_B", endpoint_id=2, key="e2"))
    assert base.request_hash() == same.request_hash()
    assert base.request_hash() != request(endpoint(server, model="other")).request_hash()
    assert base.request_hash() != request(endpoint(server, temperature=0.7)).request_hash()


def test_concurrency_is_bounded_per_endpoint(server):
    server.state.delay = 0.05
    in_flight, peak = 0, 0

    client = LLMClient(MemoryLedger())
    ep = endpoint(server, max_concurrency=3)

    async def go():
        nonlocal in_flight, peak
        provider = client._provider(ep)
        send = provider.send

        async def counting(req):
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            try:
                return await send(req)
            finally:
                in_flight -= 1

        provider.send = counting
        try:
            await asyncio.gather(*(client.complete(request(ep, f"m{i}")) for i in range(12)))
        finally:
            await client.close()

    asyncio.run(go())
    assert peak == 3


def test_the_api_key_is_read_from_the_named_variable_and_never_logged(server, monkeypatch, caplog):
    secret = "sk-test-DO-NOT-LEAK-123456"
    monkeypatch.setenv("EDUFAIR_KEY_TEST", secret)
    server.plan("tutor", "500")
    caplog.set_level(logging.DEBUG)
    ledger = MemoryLedger()
    (result,) = complete(
        LLMClient(ledger, sleep=RecordedSleep()), request(endpoint(server, api_key_env="EDUFAIR_KEY_TEST"))
    )
    assert result.ok
    assert secret not in caplog.text
    assert secret not in repr(ledger.rows)


def test_a_missing_key_variable_fails_naming_the_variable_only(server, monkeypatch):
    monkeypatch.delenv("EDUFAIR_KEY_ABSENT", raising=False)
    (result,) = complete(LLMClient(MemoryLedger()), request(endpoint(server, api_key_env="EDUFAIR_KEY_ABSENT")))
    assert not result.ok and "EDUFAIR_KEY_ABSENT is not set" in result.error


def test_request_body_as_the_protocol_expects(server):
    """The provider posts the chat-completions body itself (no SDK argument walk): model, messages,
    temperature, max_tokens, response_format and the endpoint's extra parameters merged in, the purpose
    header."""
    ep = endpoint(server, max_tokens=77, temperature=0.3, extra_params={"top_p": 0.5, "seed": 3})
    judge = CallRequest(
        endpoint=ep,
        purpose="judge",
        messages=[{"role": "system", "content": "rate"}, {"role": "user", "content": "turn"}],
        response_format={"type": "json_object"},
    )
    results = complete(LLMClient(MemoryLedger()), judge, request(ep, "other"))
    assert all(r.ok for r in results)
    by_purpose = {r.purpose: r for r in server.served}
    assert by_purpose["judge"].body == {
        "model": "test-model",
        "messages": judge.messages,
        "temperature": 0.3,
        "max_tokens": 77,
        "response_format": {"type": "json_object"},
        "top_p": 0.5,
        "seed": 3,
    }
    assert "response_format" not in by_purpose["tutor"].body


def test_a_provider_that_cannot_be_loaded_is_a_recorded_failure_not_an_exception(server):
    """A production install missing the provider's library: each call is recorded failed with the cause, nothing
    raised out of the client (the dialogue ends failed with it), and the next run asks again."""

    def unloadable(endpoint_config):
        raise ModuleNotFoundError("No module named 'aiohttp'")

    ledger = MemoryLedger()
    (result,) = complete(LLMClient(ledger, provider_factory=unloadable), request(endpoint(server)))
    assert (
        not result.ok
        and result.error == "the provider cannot be loaded: ModuleNotFoundError: No module named 'aiohttp'"
    )
    row = next(iter(ledger.rows.values()))
    assert row["status"] == "failed" and row["attempts"] == 0 and server.served == []
    (second,) = complete(LLMClient(ledger, sleep=RecordedSleep()), request(endpoint(server)))
    assert second.ok and second.call_id == result.call_id
