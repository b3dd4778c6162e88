"""LLM_HTTP_TRANSPORT: both of the SDK's HTTP transports carry calls and faults the same way over HTTP
(aiohttp is the default, for its lower CPU per call); an unknown transport is a clear permanent error."""

import pytest

from audits.llm.calls import MemoryLedger
from audits.llm.client import LLMClient
from audits.llm.openai_compat import http_transport
from audits.tests.openai_server import Fault, OpenAITestServer
from audits.tests.test_llm_client_faults import RecordedSleep, complete, endpoint, request


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer() as running:
        yield running


def test_aiohttp_is_the_default(monkeypatch):
    monkeypatch.delenv("LLM_HTTP_TRANSPORT", raising=False)
    assert http_transport() == "aiohttp"


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_each_transport_answers_and_retries_a_429(server, monkeypatch, transport):
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", transport)
    server.plan("tutor", Fault("429", retry_after=1))
    ledger = MemoryLedger()
    (result,) = complete(LLMClient(ledger, sleep=RecordedSleep()), request(endpoint(server), text=transport))
    assert result.ok and result.attempts == 2 and result.text
    assert next(iter(ledger.rows.values()))["attempt_log"][0]["error"] == "HTTP 429: rate limited; type rate_limit"


def test_an_unknown_transport_fails_the_call_with_its_name(server, monkeypatch):
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", "curl")
    (result,) = complete(LLMClient(MemoryLedger(), sleep=RecordedSleep()), request(endpoint(server), text="curl"))
    assert not result.ok and "LLM_HTTP_TRANSPORT" in result.error and "curl" in result.error
