"""What one model call is: its endpoint, request and hash, result, a provider's reply and errors, the ledger.

The vocabulary the client (`audits.llm.client`), the providers (`audits.llm.openai_compat`,
`audits.llm.simulation`), the Batch API path and the database ledger (`audits.services.ledger`) share; it imports
none of them, so the providers can use it while the client picks a provider. Pure of Django.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from .request_body import sampling_parameters

PROVIDER_OPENAI = "openai"
PROVIDER_SIMULATION = "simulation"

STATUS_OK = "ok"
STATUS_FAILED = "failed"
STATUS_UNPARSABLE = "unparsable"

# Re-ask rounds a request may go through after unusable answers before the client stops asking.
MAX_ATTEMPT_ROUNDS = 20

HASH_VERSION = 1


@dataclass(frozen=True)
class EndpointConfig:
    """Everything about an endpoint the client needs. Never holds a key: only the *name* of the
    environment variable that holds it, read when the HTTP client is built."""

    key: str  # stable handle for providers and limiters, e.g. "endpoint:12:<shape>"
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""
    temperature: float = 0.0
    max_tokens: int | None = None
    timeout: float = 60.0
    max_concurrency: int = 8
    extra_params: dict = field(default_factory=dict, hash=False, compare=False)
    simulation: dict = field(default_factory=dict, hash=False, compare=False)
    price_input_per_million: float = 0.0
    price_output_per_million: float = 0.0
    endpoint_id: int | None = None
    # Bumped by a researcher when the model behind the URL changes: part of the identity from 2 on.
    revision: int = 1
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    # How reasoning arrives (audits.llm.reasoning) and which parameters the model takes (audits.llm.request_body).
    reasoning_format: str = "auto"
    temperature_parameter: str = "auto"
    token_limit_parameter: str = "auto"
    reasoning_effort: str = ""
    # What the server's address needs besides the URL: the header the key goes in (blank: Authorization:
    # Bearer), headers and query parameters that are not secret (Azure's api-version).
    api_key_header: str = ""
    extra_headers: dict = field(default_factory=dict, hash=False, compare=False)
    query_params: dict = field(default_factory=dict, hash=False, compare=False)

    def identity(self) -> dict:
        """What makes two endpoints answer the same request the same way (no key, no database id).

        The revision enters from 2 on, so ledgers written before revisions existed (all revision 1)
        keep their hashes, and a bumped revision is another model: nothing earlier is reused for it."""
        if self.provider == PROVIDER_SIMULATION:
            identity = {"provider": self.provider, "model": self.model, "simulation": self.simulation}
        else:
            identity = {"provider": self.provider, "base_url": self.base_url.rstrip("/"), "model": self.model}
        if self.revision != 1:
            identity["revision"] = self.revision
        # The stored answer is the visible reply as this setting reads it; "auto" (the default) keeps older hashes.
        if self.reasoning_format != "auto":
            identity["reasoning_format"] = self.reasoning_format
        return identity

    def with_temperature(self, temperature: float) -> EndpointConfig:
        from dataclasses import replace

        return replace(self, temperature=temperature)


@dataclass
class CallRequest:
    endpoint: EndpointConfig
    purpose: str
    messages: list[dict]
    sample_key: str = ""
    # Facts a *simulated* model reads (turn, cue, answer…). Part of the hash for simulation endpoints
    # only; never sent to a real model.
    context: dict = field(default_factory=dict)
    response_format: dict | None = None
    # Bookkeeping for the ledger (which audit sends it); never hashed, never sent.
    origin: dict = field(default_factory=dict)

    def params(self) -> dict:
        """The parameters as hashed and stored: what is sent (audits.llm.request_body), extra ones apart."""
        params: dict[str, Any] = sampling_parameters(self.endpoint)
        if self.endpoint.extra_params:
            params["extra"] = self.endpoint.extra_params
        if self.response_format:
            params["response_format"] = self.response_format
        return params

    def stored_request(self) -> dict:
        """The request as the ledger keeps it (and as the transcript viewer shows it)."""
        stored = {"purpose": self.purpose, "messages": self.messages, "params": self.params()}
        if self.sample_key:
            stored["sample_key"] = self.sample_key
        if self.endpoint.provider == PROVIDER_SIMULATION:
            stored["context"] = self.context
        return stored

    def request_hash(self) -> str:
        payload = {
            "v": HASH_VERSION,
            "endpoint": self.endpoint.identity(),
            "purpose": self.purpose,
            "messages": self.messages,
            "params": self.params(),
            "sample_key": self.sample_key,
        }
        if self.endpoint.provider == PROVIDER_SIMULATION:
            payload["context"] = self.context
        canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def attempt_key(request_hash: str, round_number: int) -> str:
    """The ledger key of a request's `round_number`-th asking: round 0 is the request hash itself; each
    later round (after an unusable answer) is a key of its own, so the bad answer stays on record."""
    if round_number == 0:
        return request_hash
    return hashlib.sha256(f"{request_hash}:round:{round_number}".encode()).hexdigest()


@dataclass
class CallResult:
    ok: bool
    text: str | None
    call_id: int | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    latency_ms: float = 0.0
    error: str = ""
    status: str = ""  # of a ledger row found by `Ledger.lookup`: STATUS_OK or STATUS_UNPARSABLE
    reported_model: str = ""  # the model the server said answered
    reasoning: str = ""  # the model's reasoning, apart from the text (audits.llm.reasoning)
    reasoning_tokens: int = 0  # of completion_tokens, those the model spent reasoning (as the server reported)
    finish_reason: str = ""


@dataclass(frozen=True)
class Usage:
    """Tokens a server billed for one answer (reasoning tokens are part of the completion tokens)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def __bool__(self) -> bool:
        return bool(self.prompt_tokens or self.completion_tokens)


@dataclass(frozen=True)
class ProviderReply:
    text: str  # the visible reply only
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""  # as the server reported it in the response
    reasoning: str = ""
    reasoning_tokens: int = 0
    finish_reason: str = ""
    reasoning_source: str = ""  # where the reasoning was found (audits.llm.reasoning: field, tags)
    reasoning_opened_in_prompt: bool = False  # a lone </think>: the chat template opened the reasoning block

    @property
    def usage(self) -> Usage:
        return Usage(self.prompt_tokens, self.completion_tokens, self.reasoning_tokens)


class RetryableError(Exception):
    """Worth trying again (rate limit, server error, timeout); `retry_after` in seconds when told;
    `rate_limited` when the server said 429 (the endpoint's in-flight limit then backs off); `usage` when the
    server billed the answer that could not be used."""

    def __init__(
        self,
        message: str,
        retry_after: float | None = None,
        *,
        rate_limited: bool = False,
        usage: Usage | None = None,
        status: int | None = None,
        reasoning: str = "",
        finish_reason: str = "",
    ):
        super().__init__(message)
        self.retry_after = retry_after
        self.rate_limited = rate_limited
        self.usage = usage or Usage()
        self.status = status  # the HTTP status that said so, when one did
        self.reasoning = reasoning  # what the model reasoned before its answer proved unusable
        self.finish_reason = finish_reason


class PermanentError(Exception):
    """Trying again would give the same answer (bad request, bad key, unknown model, a used-up reasoning
    budget); `usage` when the server billed the answer that could not be used."""

    def __init__(self, message: str, *, usage: Usage | None = None, reasoning: str = "", finish_reason: str = ""):
        super().__init__(message)
        self.usage = usage or Usage()
        self.reasoning = reasoning  # what the model reasoned before its answer proved unusable
        self.finish_reason = finish_reason


class Provider(Protocol):
    async def send(self, request: CallRequest) -> ProviderReply: ...

    async def close(self) -> None: ...


class Ledger(Protocol):
    async def lookup(self, request_hash: str) -> CallResult | None:
        """The row under this key if it holds an answer: status STATUS_OK (an answer to serve) or
        STATUS_UNPARSABLE (an answer the caller could not use: never served; the client moves on to the
        next attempt key). None when there is no row or the row failed (then this key is sent)."""

    async def record(self, request: CallRequest, request_hash: str, result: CallResult, attempt_log: list[dict]) -> int:
        """Store the outcome (insert, or update a failed row); return the row id."""

    async def reject(self, call_id: int, problem: str) -> None:
        """Mark an answered row unparsable (the caller could not use its content); its text stays."""


class MemoryLedger:
    """A ledger in a dict: for tests and for benchmarks that measure the client without a database."""

    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}
        self._hash_by_id: dict[int, str] = {}

    async def lookup(self, request_hash: str) -> CallResult | None:
        row = self.rows.get(request_hash)
        if row is None or row["status"] == STATUS_FAILED:
            return None
        return CallResult(
            ok=row["status"] == STATUS_OK,
            text=row["text"],
            call_id=row["id"],
            cached=True,
            prompt_tokens=row["prompt_tokens"],
            completion_tokens=row["completion_tokens"],
            attempts=0,
            status=row["status"],
            reported_model=row.get("reported_model", ""),
        )

    async def reject(self, call_id: int, problem: str) -> None:
        row = self.rows.get(self._hash_by_id.get(call_id, ""))
        if row is not None and row["status"] == STATUS_OK:
            row["status"] = STATUS_UNPARSABLE
            row["error"] = problem

    async def record(self, request, request_hash, result, attempt_log) -> int:
        row = self.rows.get(request_hash)
        row_id = row["id"] if row else len(self.rows) + 1
        self._hash_by_id[row_id] = request_hash
        previous_attempts = row["attempts"] if row else 0
        self.rows[request_hash] = {
            "id": row_id,
            "request": request.stored_request(),
            "status": STATUS_OK if result.ok else STATUS_FAILED,
            "text": result.text,
            # A failed row asked again keeps what its earlier attempts were billed.
            "prompt_tokens": result.prompt_tokens + (row["prompt_tokens"] if row else 0),
            "completion_tokens": result.completion_tokens + (row["completion_tokens"] if row else 0),
            "attempts": previous_attempts + result.attempts,
            "attempt_log": (row["attempt_log"] if row else []) + attempt_log,
            "error": result.error,
            "reported_model": result.reported_model,
            "reasoning": result.reasoning,
            "reasoning_tokens": result.reasoning_tokens,
            "finish_reason": result.finish_reason,
        }
        return row_id
