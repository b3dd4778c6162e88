"""Addresses are checked again at the moment of connecting, on both HTTP transports (LLM_HTTP_TRANSPORT)
and the Batch API's client: a host name that resolved to a public address when the endpoint was saved and
resolves to loopback now (DNS rebinding) is refused with nothing sent, as is a literal internal address
that got past the save. A connection that fails reads the same whatever answered (a closed port, a
listener that does not speak HTTP), so the connection test does not map ports."""

import asyncio
import http.server
import socket
import socketserver
import threading

import pytest

from audits.llm.calls import CallRequest, EndpointConfig, MemoryLedger
from audits.llm.client import LLMClient
from audits.llm.openai_compat import CONNECTION_FAILED, endpoint_connection_check
from audits.services.batch_judging import BatchApiError, _api, batch_client
from audits.tests.engine_factories import openai_endpoint
from audits.tests.openai_server import OpenAITestServer

REBINDING_HOST = "models.rebinding.test"
PUBLIC_ADDRESS = "93.184.215.14"
TRANSPORTS = ["aiohttp", "httpx"]


@pytest.fixture(scope="module")
def server():
    with OpenAITestServer() as running:
        yield running


@pytest.fixture
def default_policy(settings):
    settings.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = []
    settings.EDUFAIR_ENDPOINT_ALLOW_PRIVATE = False
    return settings


@pytest.fixture
def dns(monkeypatch):
    """The system resolver, with REBINDING_HOST answering what the test says (as an attacker's DNS would)."""
    real = socket.getaddrinfo
    answer = {"address": PUBLIC_ADDRESS}

    def getaddrinfo(host, port, *args, **kwargs):
        if host in (REBINDING_HOST, REBINDING_HOST.encode()):  # anyio passes the name IDNA-encoded
            return real(answer["address"], port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answer


def config(base_url: str) -> EndpointConfig:
    return EndpointConfig(key="outbound", provider="openai", model="test-model", base_url=base_url, timeout=5.0)


def check(endpoint: EndpointConfig) -> tuple[bool, str]:
    return asyncio.run(endpoint_connection_check(endpoint))


@pytest.mark.django_db
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_name_that_rebinds_to_loopback_after_the_save_is_refused(
    researcher_client, server, default_policy, dns, monkeypatch, transport
):
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", transport)
    body = {
        "name": "rebinding",
        "provider": "openai",
        "model": "m",
        "base_url": f"http://{REBINDING_HOST}:{server.port}/v1",
    }
    made = researcher_client.post("/api/model-endpoints/", body, content_type="application/json")
    assert made.status_code == 201, made.content  # public when saved

    dns["address"] = "127.0.0.1"
    served = len(server.state.served)
    tested = researcher_client.post(f"/api/model-endpoints/{made.json()['id']}/test-connection/").json()
    assert tested["ok"] is False and tested["message"].startswith("refused:"), tested
    assert "loopback" in tested["message"]
    assert len(server.state.served) == served

    # The same name, once the operator allows loopback, reaches the server: the check sat in the path.
    default_policy.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = ["127.0.0.0/8"]
    tested = researcher_client.post(f"/api/model-endpoints/{made.json()['id']}/test-connection/").json()
    assert tested["ok"] is True, tested
    assert len(server.state.served) == served + 1


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_literal_internal_address_is_refused_when_connecting(server, default_policy, monkeypatch, transport):
    """An endpoint written past the save's check (an older row, a raw update) is refused by the client,
    never retried, and never reaches the listener."""
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", transport)
    served = len(server.state.served)
    request = CallRequest(
        endpoint=config(server.base_url), purpose="tutor", messages=[{"role": "user", "content": "hi"}]
    )

    async def go():
        client = LLMClient(MemoryLedger())
        try:
            return await client.complete(request)
        finally:
            await client.close()

    result = asyncio.run(go())
    assert not result.ok and result.attempts == 1 and "refused" in result.error and "loopback" in result.error
    assert len(server.state.served) == served


@pytest.mark.django_db
def test_the_batch_client_checks_the_address_it_connects_to(server, default_policy):
    endpoint = openai_endpoint("batch-internal", server.base_url, batch_capable=True)
    client = batch_client(endpoint)
    served = len(server.state.served)
    try:
        with pytest.raises(BatchApiError, match="refused: .*loopback"):
            _api(lambda: client.batches.list(), "list the batches")
    finally:
        client.close()
    assert len(server.state.served) == served


@pytest.fixture
def redirector(server):
    """A server that answers every POST with a redirect to the test server's literal loopback address."""
    target = f"{server.base_url}/chat/completions"

    class Redirect(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(307)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    thread = threading.Thread(target=listener.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield listener.server_address[1]
    listener.shutdown()
    listener.server_close()


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_redirect_to_an_internal_address_is_refused(server, redirector, default_policy, dns, monkeypatch, transport):
    """The operator allowed one host by name; it redirects to an address that is not allowed."""
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", transport)
    dns["address"] = "127.0.0.1"
    default_policy.EDUFAIR_ENDPOINT_ALLOWED_HOSTS = [REBINDING_HOST]
    served = len(server.state.served)
    ok, message = check(config(f"http://{REBINDING_HOST}:{redirector}/v1"))
    assert not ok and message.startswith("refused: 127.0.0.1 resolves to a loopback address"), message
    assert len(server.state.served) == served


class NotHTTP(socketserver.BaseRequestHandler):
    def handle(self):
        self.request.sendall(b"-ERR unknown command 'POST'\r\n")  # as Redis answers an HTTP request


@pytest.fixture(scope="module")
def not_http_listener():
    listener = socketserver.ThreadingTCPServer(("127.0.0.1", 0), NotHTTP)
    listener.daemon_threads = True
    thread = threading.Thread(target=listener.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield listener.server_address[1]
    listener.shutdown()
    listener.server_close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_failed_connection_reads_the_same_whatever_listens(not_http_listener, monkeypatch, transport):
    monkeypatch.setenv("LLM_HTTP_TRANSPORT", transport)
    closed = check(config(f"http://127.0.0.1:{closed_port()}/v1"))
    odd = check(config(f"http://127.0.0.1:{not_http_listener}/v1"))
    assert closed == odd == (False, CONNECTION_FAILED)
    for word in ["ConnectError", "RemoteProtocolError", "refused", "Errno", "ERR"]:
        assert word not in CONNECTION_FAILED
