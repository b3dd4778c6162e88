"""The provider for every model that speaks the OpenAI chat-completions protocol, through the SDK's `AsyncOpenAI`.

OpenAI, vLLM, Ollama, llama.cpp server, OpenRouter and any other server of that protocol.

The SDK's own retries are off (`max_retries=0`): `audits.llm.client` is the one retry layer. This
module only translates: a request into the SDK's chat-completions POST, the SDK's errors into
`RetryableError` (with the server's Retry-After) or `PermanentError`, and the body into a
`ProviderReply`. The SDK does not check that a body is a chat completion (an HTML page with status 200
comes back as a `str`, `{"hello": 1}` as a completion with no choices, a cut-off body raises
`JSONDecodeError`), so `reply_from_completion` does, and every malformed reply is a `MalformedReply`
(retryable). The API key is read from the environment variable the endpoint names, at the moment the
HTTP client is built, and never logged; only a variable `audits.llm.outbound_policy` allows is read, and
every connection goes through `audits.llm.outbound_transport`, which refuses addresses the policy does not
allow. A connection that fails is reported in one wording whatever the cause (refused, reset, not HTTP),
so the errors do not tell one kind of listener from another.
"""

from __future__ import annotations

import asyncio
import email.utils
import itertools
import json
import os
import time
import uuid

import aiohttp
import openai
from openai.types.chat import ChatCompletion

from .calls import CallRequest, EndpointConfig, PermanentError, ProviderReply, RetryableError
from .completion_reply import MalformedReply, reply_from_completion
from .outbound_policy import OutboundRefused, current_policy
from .reasoning import REASONING_TAGS
from .request_body import chat_body, parameters_summary
from .server_errors import status_error_text

# vLLM, llama.cpp and Ollama accept any key; the SDK insists on one being set.
NO_KEY_PLACEHOLDER = "not-needed"
PURPOSE_HEADER = "X-EduFair-Purpose"
CONNECTION_FAILED = "no HTTP answer from the endpoint (the connection failed or was closed)"


class MissingAPIKey(PermanentError):
    pass


class KeyVariableRefused(PermanentError):
    """The endpoint names a key variable the operator's policy does not allow (it was not read)."""


class AddressRefused(PermanentError):
    """The endpoint's host resolves to an address the operator's policy does not allow (nothing was sent)."""


def api_key_for(endpoint: EndpointConfig) -> str:
    """The key to send: the value of the endpoint's key variable, which must be one the policy allows and bound to
    the endpoint's host (checked before the environment is looked at, so a refusal says nothing of what is set)."""
    if not endpoint.api_key_env:
        return NO_KEY_PLACEHOLDER
    policy = current_policy()
    refusal = policy.key_env_refusal(endpoint.api_key_env) or policy.key_host_refusal(
        endpoint.api_key_env, endpoint.base_url
    )
    if refusal:
        raise KeyVariableRefused(refusal)
    value = os.environ.get(endpoint.api_key_env, "")
    if not value:
        raise MissingAPIKey(
            f"the environment variable {endpoint.api_key_env} is not set (the operator sets it for the web "
            "server and the workers)"
        )
    return value


def retry_after_seconds(headers) -> float | None:
    """Seconds to wait from `retry-after-ms` or `Retry-After` (seconds or an HTTP date)."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


# Statuses worth asking again besides 5xx (Anthropic's 529 "overloaded" is one of those).
RETRIED_STATUSES = (408, 409, 429)


def _body_text(response) -> str:
    """The error body as text ("" when it cannot be read): server_errors reads JSON, lists, text and HTML."""
    try:
        return response.text
    except Exception:  # noqa: BLE001 - a body that cannot be read leaves the status alone to speak
        return ""


def address_headers(endpoint: EndpointConfig, api_key: str) -> dict:
    """The headers every request of the endpoint carries: its own (not secret), and the key in the header it names
    (Azure's `api-key`) instead of `Authorization: Bearer`, which is then not sent."""
    headers: dict = {str(name): str(value) for name, value in (endpoint.extra_headers or {}).items()}
    if endpoint.api_key_header:
        headers[endpoint.api_key_header] = api_key
    return headers


def request_headers(endpoint: EndpointConfig, purpose: str) -> dict:
    """The headers of one request: its purpose, and no `Authorization` where the key goes in a header of its own
    (the SDK takes the omission per request only)."""
    headers: dict = {PURPOSE_HEADER: purpose}
    if endpoint.api_key_header:
        headers["Authorization"] = openai.Omit()
    return headers


HTTP_TRANSPORTS = ("httpx", "aiohttp")


def http_transport() -> str:
    """The SDK's HTTP transport (LLM_HTTP_TRANSPORT): aiohttp (the default), or the SDK's own httpx one.
    aiohttp spends less of the event loop's time per call: httpx's pool checks every idle connection on
    each request, a third of the engine loop's time at 64 in flight (benchmarks/RESULTS.md)."""
    transport = os.environ.get("LLM_HTTP_TRANSPORT", "aiohttp").strip().lower() or "aiohttp"
    if transport not in HTTP_TRANSPORTS:
        raise PermanentError(f"LLM_HTTP_TRANSPORT must be one of {', '.join(HTTP_TRANSPORTS)}, not {transport!r}")
    return transport


_PROCESS_TAG = uuid.uuid4().hex[:16]
_request_numbers = itertools.count(1)


def _idempotency_key() -> str:
    """The SDK makes a key per POST (a uuid4, a system call, every time) unless given one, and the
    OpenAI client sends it nowhere; a counter costs nothing and stays unique per process."""
    return f"edufair-{_PROCESS_TAG}-{next(_request_numbers)}"


class OpenAICompatProvider:
    def __init__(self, endpoint: EndpointConfig) -> None:
        self.endpoint = endpoint
        self._client: openai.AsyncOpenAI | None = None

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            from .outbound_transport import checked_async_http_client

            api_key = api_key_for(self.endpoint)
            # Keep a connection per concurrent request alive; the SDK's default pool (20 kept alive)
            # would reconnect constantly at higher concurrency.
            http_client = checked_async_http_client(
                policy=current_policy(),
                transport=http_transport(),
                max_connections=max(1, self.endpoint.max_concurrency),
                timeout=self.endpoint.timeout,
            )
            self._client = openai.AsyncOpenAI(
                api_key=api_key,
                base_url=self.endpoint.base_url or None,
                max_retries=0,
                timeout=self.endpoint.timeout,
                http_client=http_client,
                default_headers=address_headers(self.endpoint, api_key),
                default_query=dict(self.endpoint.query_params) or None,
            )
        return self._client

    async def send(self, request: CallRequest) -> ProviderReply:
        client = self._get_client()
        body = chat_body(request.endpoint, request.messages, request.response_format)
        options = {"headers": request_headers(self.endpoint, request.purpose), "idempotency_key": _idempotency_key()}
        try:
            # The SDK's own POST, as `chat.completions.create` makes it, minus its type-driven walk over
            # the arguments: these are already plain JSON (strings in dicts), and the walk was a quarter
            # of the event loop's time per call (benchmarks/RESULTS.md, engine throughput).
            completion = await client.post("/chat/completions", cast_to=ChatCompletion, body=body, options=options)
        except OutboundRefused as exc:
            raise AddressRefused(f"refused: {exc}") from None
        except openai.APITimeoutError:
            raise RetryableError(f"timed out after {self.endpoint.timeout:g} s") from None
        except openai.APIConnectionError as exc:
            if isinstance(exc.__cause__, OutboundRefused):
                raise AddressRefused(f"refused: {exc.__cause__}") from None
            raise RetryableError(CONNECTION_FAILED) from None
        except (aiohttp.ClientError, OSError):
            # An error of aiohttp's own that its transport left unmapped (outbound_transport maps those it
            # meets while connecting): the same failure, in the same words.
            raise RetryableError(CONNECTION_FAILED) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            message = status_error_text(status, _body_text(exc.response))
            if status in RETRIED_STATUSES or status >= 500:
                raise RetryableError(
                    message, retry_after_seconds(exc.response.headers), rate_limited=status == 429, status=status
                ) from None
            raise PermanentError(message) from None
        except openai.APIResponseValidationError as exc:
            raise MalformedReply(f"malformed response: {exc.message[:200]}") from None
        except json.JSONDecodeError as exc:
            raise MalformedReply(f"the body is not valid JSON ({exc.msg} at character {exc.pos})") from None
        except openai.APIError as exc:
            raise MalformedReply(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return reply_from_completion(completion, self.endpoint)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


# A server still loading its model (llama.cpp's 503 "Loading model") is asked this many times by a connection test,
# waiting what it says (at most LOADING_WAIT_MAX seconds each time) before the test says "loading".
LOADING_TRIES = 3
LOADING_WAIT_MAX = 5.0


# A lone </think> (DeepSeek-R1-Distill): "auto" cannot tell a reply the budget cut off before it from a reply.
TEMPLATE_OPENED_ADVICE = (
    "a lone </think>: the chat template opens the reasoning, so a reply cut off before </think> has no tag; set "
    'How reasoning arrives to "tags" to read it as reasoning'
)


def _reasoning_seen(reply: ProviderReply, endpoint: EndpointConfig) -> str:
    if not reply.reasoning and not reply.reasoning_tokens:
        return "no reasoning seen"
    tokens = f" ({reply.reasoning_tokens} reasoning tokens)" if reply.reasoning_tokens else ""
    if "tags" in reply.reasoning_source:
        if reply.reasoning_opened_in_prompt and endpoint.reasoning_format != REASONING_TAGS:
            return f"reasoning inside the reply: will be removed{tokens}; {TEMPLATE_OPENED_ADVICE}"
        return f"reasoning inside the reply: will be removed{tokens}"
    if "field" in reply.reasoning_source:
        return f"reasoning in a separate field, kept apart from the reply{tokens}"
    return f"reasoning not shown by the server{tokens}"


async def endpoint_connection_check(endpoint: EndpointConfig, *, sleep=asyncio.sleep) -> tuple[bool | None, str]:
    """One tiny request, no ledger: does the endpoint answer, and how does its reasoning arrive? Returns (ok,
    message); ok is None while the server is still loading its model (503 after LOADING_TRIES asks)."""
    provider = OpenAICompatProvider(endpoint)
    request = CallRequest(endpoint=endpoint, purpose="connection-test", messages=[{"role": "user", "content": "ping"}])
    sent = f"sent: {parameters_summary(endpoint)}"
    try:
        for attempt in range(1, LOADING_TRIES + 1):
            started = time.perf_counter()
            try:
                reply = await provider.send(request)
                break
            except RetryableError as exc:
                if exc.status is None:  # no HTTP answer: the same words whatever listens there
                    return False, str(exc)
                if exc.status != 503:
                    return False, f"{exc} ({sent})"
                if attempt == LOADING_TRIES:
                    if "loading" not in str(exc).lower():
                        return False, f"{exc} ({sent})"
                    return None, f"loading: not ready after {attempt} tries ({exc}); test again shortly"
                await sleep(min(exc.retry_after if exc.retry_after is not None else 1.0, LOADING_WAIT_MAX))
            except PermanentError as exc:
                return False, f"{exc} ({sent})"
    finally:
        await provider.close()
    elapsed = (time.perf_counter() - started) * 1000
    return (
        True,
        f"answered in {elapsed:.0f} ms ({len(reply.text)} characters); {_reasoning_seen(reply, endpoint)}; {sent}",
    )
