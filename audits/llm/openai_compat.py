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
from .outbound_policy import OutboundRefused, current_policy

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


class MalformedReply(RetryableError):
    """The server answered, but not with a usable chat completion (worth asking again)."""


def reply_from_completion(completion: object) -> ProviderReply:
    """The text, token counts and reported model of a chat completion; MalformedReply saying what is
    wrong with anything else."""
    if isinstance(completion, str | bytes):
        start = completion[:60].decode("utf-8", "replace") if isinstance(completion, bytes) else completion[:60]
        raise MalformedReply(f"the body is not JSON but text: {start.strip()!r}")
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list):
        raise MalformedReply(f"the body is not a chat completion ({type(completion).__name__} without choices)")
    if not choices:
        raise MalformedReply("the response had no choices")
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    if message is None:
        raise MalformedReply("the first choice has no message")
    if content is not None and not isinstance(content, str):
        raise MalformedReply(f"the message content is a {type(content).__name__}, not text")
    if content is None or not content.strip():
        raise MalformedReply("empty content")
    usage = getattr(completion, "usage", None)
    model = getattr(completion, "model", None)
    return ProviderReply(
        text=content,
        prompt_tokens=_count(getattr(usage, "prompt_tokens", 0)),
        completion_tokens=_count(getattr(usage, "completion_tokens", 0)),
        model=model[:200] if isinstance(model, str) else "",
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def api_key_for(endpoint: EndpointConfig) -> str:
    """The key to send: the value of the endpoint's key variable, which must be one the policy allows
    (checked on the name before the environment is looked at, so a refusal says nothing of what is set)."""
    if not endpoint.api_key_env:
        return NO_KEY_PLACEHOLDER
    refusal = current_policy().key_env_refusal(endpoint.api_key_env)
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
            )
        return self._client

    async def send(self, request: CallRequest) -> ProviderReply:
        client = self._get_client()
        body: dict = {"model": self.endpoint.model, "messages": request.messages}
        body["temperature"] = request.endpoint.temperature
        if request.endpoint.max_tokens:
            body["max_tokens"] = request.endpoint.max_tokens
        if request.response_format:
            body["response_format"] = request.response_format
        if request.endpoint.extra_params:
            body.update(request.endpoint.extra_params)  # as the SDK's extra_body: merged into the JSON body
        options = {"headers": {PURPOSE_HEADER: request.purpose}, "idempotency_key": _idempotency_key()}
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
            message = f"HTTP {status}"
            if status == 429 or status == 408 or status == 409 or status >= 500:
                raise RetryableError(
                    message, retry_after_seconds(exc.response.headers), rate_limited=status == 429
                ) from None
            raise PermanentError(message) from None
        except openai.APIResponseValidationError as exc:
            raise MalformedReply(f"malformed response: {exc.message[:200]}") from None
        except json.JSONDecodeError as exc:
            raise MalformedReply(f"the body is not valid JSON ({exc.msg} at character {exc.pos})") from None
        except openai.APIError as exc:
            raise MalformedReply(f"{type(exc).__name__}: {str(exc)[:200]}") from None
        return reply_from_completion(completion)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None


async def endpoint_connection_check(endpoint: EndpointConfig) -> tuple[bool, str]:
    """One tiny request, no retries, no ledger: does the endpoint answer? Returns (ok, message)."""
    provider = OpenAICompatProvider(endpoint)
    request = CallRequest(endpoint=endpoint, purpose="connection-test", messages=[{"role": "user", "content": "ping"}])
    started = time.perf_counter()
    try:
        reply = await provider.send(request)
    except (RetryableError, PermanentError) as exc:
        return False, str(exc)
    finally:
        await provider.close()
    return True, f"answered in {(time.perf_counter() - started) * 1000:.0f} ms ({len(reply.text)} characters)"
