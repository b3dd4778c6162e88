"""HTTP transports for model endpoints that check each address against the outbound policy when connecting.

The policy is `audits.llm.outbound_policy`; checking at the moment of connecting means a host name that resolved to a
public address when the endpoint was saved and resolves to a private one now (DNS rebinding), or a redirect to an
internal URL, is refused before a byte is sent.

Both of the SDK's transports (`LLM_HTTP_TRANSPORT`) resolve the name once and connect only to the
addresses that were checked: httpx through a network backend that resolves, checks and connects to the
address itself (TLS still verifies the host name), aiohttp through a resolver that checks what it returns
(aiohttp skips its resolver for a literal IP, so the transport checks those before the request).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import Any

import aiohttp
import anyio
import httpcore2
import httpx2
import openai
from aiohttp.abc import AbstractResolver
from openai._vendor.httpx_aiohttp import AiohttpTransport  # the SDK's own aiohttp transport

from .outbound_policy import OutboundPolicy, OutboundRefused, parse_ip

# Seconds an idle kept-alive connection stays open (httpx's default).
KEEPALIVE_EXPIRY = 5.0


def _unique(addresses: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(addresses))


def _checked(policy: OutboundPolicy, host: str, addresses: list[str]) -> list[str]:
    refusal = policy.addresses_refusal(host, addresses)
    if refusal:
        raise OutboundRefused(refusal)
    return addresses


# --- httpx ----------------------------------------------------------------------------------------


class CheckedAsyncBackend(httpcore2.AsyncNetworkBackend):
    """httpcore's network backend, resolving and checking each host before connecting to its address."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = httpcore2.AnyIOBackend()

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options=None
    ) -> httpcore2.AsyncNetworkStream:
        try:
            with anyio.fail_after(timeout):
                infos = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except TimeoutError as exc:
            raise httpcore2.ConnectTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        addresses = _checked(self.policy, host, _unique(str(info[4][0]) for info in infos))
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore2.ConnectError(f"no address for {host}")

    async def connect_unix_socket(self, *args, **kwargs):
        raise OutboundRefused("endpoints connect over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


class CheckedSyncBackend(httpcore2.NetworkBackend):
    """The same check for the synchronous client (the Batch API's files and batches)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = httpcore2.SyncBackend()

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None, socket_options=None
    ) -> httpcore2.NetworkStream:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise httpcore2.ConnectError(str(exc)) from exc
        addresses = _checked(self.policy, host, _unique(str(info[4][0]) for info in infos))
        failure: Exception | None = None
        for address in addresses:
            try:
                return self.inner.connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except (httpcore2.ConnectError, httpcore2.ConnectTimeout) as exc:
                failure = exc
        raise failure or httpcore2.ConnectError(f"no address for {host}")

    def connect_unix_socket(self, *args, **kwargs):
        raise OutboundRefused("endpoints connect over TCP only")

    def sleep(self, seconds: float) -> None:
        self.inner.sleep(seconds)


def _pool_arguments(max_connections: int | None) -> dict[str, Any]:
    return {
        "ssl_context": httpx2.create_ssl_context(),
        "max_connections": max_connections,
        "max_keepalive_connections": max_connections,
        "keepalive_expiry": KEEPALIVE_EXPIRY,
    }


def checked_httpx_transport(policy: OutboundPolicy, max_connections: int | None) -> httpx2.AsyncHTTPTransport:
    transport = httpx2.AsyncHTTPTransport()
    # httpx takes no network backend of its own; its pool (httpcore's) does.
    transport._pool = httpcore2.AsyncConnectionPool(
        **_pool_arguments(max_connections), network_backend=CheckedAsyncBackend(policy)
    )
    return transport


def checked_httpx_sync_transport(policy: OutboundPolicy, max_connections: int | None = None) -> httpx2.HTTPTransport:
    transport = httpx2.HTTPTransport()
    transport._pool = httpcore2.ConnectionPool(
        **_pool_arguments(max_connections), network_backend=CheckedSyncBackend(policy)
    )
    return transport


# --- aiohttp --------------------------------------------------------------------------------------


class CheckedResolver(AbstractResolver):
    """aiohttp's resolver, refusing a host whose addresses the policy does not allow."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self.policy = policy
        self.inner = aiohttp.DefaultResolver()

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET):
        results = await self.inner.resolve(host, port, family)
        _checked(self.policy, host, _unique(str(result["host"]) for result in results))
        return results

    async def close(self) -> None:
        await self.inner.close()


class CheckedAiohttpTransport(AiohttpTransport):
    """The SDK's aiohttp transport (vendored httpx-aiohttp) on a session whose connector resolves through
    `CheckedResolver`; literal IP hosts, which aiohttp never resolves, are checked here. It also names
    aiohttp's connection errors as httpx does, so they read the same on both transports."""

    def __init__(self, policy: OutboundPolicy, max_connections: int | None) -> None:
        self.policy = policy
        self._literal_hosts_checked: set[str] = set()

        def session() -> aiohttp.ClientSession:  # made at the first request, inside the event loop
            connector = aiohttp.TCPConnector(
                resolver=CheckedResolver(policy),
                limit=max_connections or 0,
                keepalive_timeout=KEEPALIVE_EXPIRY,
                ssl=httpx2.create_ssl_context(),
            )
            return aiohttp.ClientSession(connector=connector)

        super().__init__(client=session)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        host = request.url.host
        if host not in self._literal_hosts_checked and parse_ip(host) is not None:
            _checked(self.policy, host, [host])
            self._literal_hosts_checked.add(host)
        try:
            return await super().handle_async_request(request)
        except httpx2.ConnectTimeout as exc:
            # The vendored mapping takes every aiohttp connection error for a timeout (a refused port
            # too, at once): only a real timeout stays one.
            cause = exc.__cause__
            if isinstance(cause, aiohttp.ClientConnectionError) and not isinstance(cause, TimeoutError):
                raise httpx2.ConnectError(str(cause), request=request) from cause
            raise
        except aiohttp.ClientError as exc:
            # Left unmapped by it: a status line that is not HTTP's, a malformed header.
            raise httpx2.RemoteProtocolError(str(exc), request=request) from exc


# --- the SDK's clients ----------------------------------------------------------------------------


def checked_async_http_client(
    *, policy: OutboundPolicy, transport: str, max_connections: int, timeout: float
) -> httpx2.AsyncClient:
    """The `http_client` for `openai.AsyncOpenAI`, on the named transport ("aiohttp" or "httpx")."""
    if transport == "aiohttp":
        return openai.DefaultAioHttpClient(transport=CheckedAiohttpTransport(policy, max_connections), timeout=timeout)
    return openai.DefaultAsyncHttpxClient(transport=checked_httpx_transport(policy, max_connections), timeout=timeout)


def checked_sync_http_client(*, policy: OutboundPolicy, timeout: float) -> httpx2.Client:
    """The `http_client` for `openai.OpenAI`."""
    return openai.DefaultHttpxClient(transport=checked_httpx_sync_transport(policy), timeout=timeout)
