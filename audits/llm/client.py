"""The one door for every model call: the ledger first, one concurrency limit and one retry layer, the ledger again.

- **Ledger.** A request is identified by a SHA-256 over (endpoint identity, model, purpose, messages,
  sampling parameters, and a sample key when sampling is not deterministic). A request whose hash is
  already answered is never sent again: re-running an audit, cloning it with one factor changed, or a
  worker resuming after a crash costs nothing for calls already made. Identical requests in flight at
  the same moment in one process are sent once and shared.
- **Concurrency and rate limits.** An `audits.llm.limits.EndpointLimiter` per endpoint bounds requests
  in flight by an adaptive limit (at most `max_concurrency`; halved on 429s, grown back on successes)
  and holds the endpoint's requests- and tokens-per-minute budgets, shared by every process that uses
  the same `BucketStore`. A slot is held only while a request waits for its budget or is on the wire,
  never while backing off; every HTTP attempt takes one.
- **Retries.** 429, 5xx, timeouts, connection errors and every malformed reply (a body that is not
  JSON or is cut short, an HTML page with status 200, a body that is not a chat completion, no choice
  or empty content) are retried with exponential backoff and full jitter; a `Retry-After` (or
  `retry-after-ms`) header is honoured as the minimum wait. After `max_attempts` the call is recorded as
  failed, with every attempt's error in the ledger. Other errors (400, 401, 404…) fail at once. An
  exception the provider did not foresee is one more failed attempt, never an exception out of the
  client: a dialogue ends done or failed with its error, never lost. The `openai` client itself is
  built with `max_retries=0`, so there is exactly one retry layer.
- **Unusable answers.** A reply the caller cannot use (judge scores or a reveal check that do not
  parse) is marked unparsable (`reject`), its text kept. An unparsable row is never served again:
  asking the same request later walks to the next *attempt key* (the request hash with a re-ask round)
  and sends it afresh, so retrying a dialogue, resuming an audit or re-judging re-asks instead of
  replaying the bad answer.

Pure of Django: the ledger is an interface (`audits.llm.calls.Ledger`); `audits.services.ledger` provides the
database one, `audits.llm.calls.MemoryLedger` serves tests and the plain benchmarks. What a call, its request and
its result are lives in `audits.llm.calls`, which the providers share with this module.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .calls import (
    MAX_ATTEMPT_ROUNDS,
    PROVIDER_OPENAI,
    PROVIDER_SIMULATION,
    STATUS_FAILED,
    STATUS_OK,
    CallRequest,
    CallResult,
    EndpointConfig,
    Ledger,
    PermanentError,
    Provider,
    RetryableError,
    Usage,
    attempt_key,
)
from .limits import BucketStore, EndpointLimiter, MemoryBucketStore, estimate_tokens
from .simulation import SimulationProvider

logger = logging.getLogger(__name__)


# The module behind each provider that is not imported with this one: `provider_for` imports it on first use,
# `providers_preload` ahead of it.
PROVIDER_MODULES = {PROVIDER_OPENAI: f"{__package__}.openai_compat"}


def provider_for(endpoint: EndpointConfig) -> Provider:
    if endpoint.provider == PROVIDER_SIMULATION:
        return SimulationProvider(endpoint)
    if endpoint.provider == PROVIDER_OPENAI:
        # Imported here: the openai SDK takes over half a second to import, and a process that only ever simulates
        # (the demo, most tests) never pays for it.
        return importlib.import_module(PROVIDER_MODULES[PROVIDER_OPENAI]).OpenAICompatProvider(endpoint)
    raise ValueError(f"unknown provider {endpoint.provider!r}")


def providers_preload(providers: set[str]) -> threading.Thread | None:
    """Import the modules of these providers on a thread of their own, so that the first call does not
    stall the event loop (and every dialogue on it) while the client library loads: over half a second
    for the openai SDK, several seconds on a busy worker (benchmarks/RESULTS.md, engine throughput).
    The import lock makes a first call that comes sooner wait for this import, not start a second one."""
    modules = [PROVIDER_MODULES[p] for p in sorted(providers) if p in PROVIDER_MODULES]
    if not modules:
        return None

    def load() -> None:
        for module in modules:
            importlib.import_module(module)

    thread = threading.Thread(target=load, name="edufair-provider-preload", daemon=True)
    thread.start()
    return thread


def _tokens(usage: Usage) -> dict:
    """An attempt's billed tokens as its log entry keeps them (nothing when nothing was billed)."""
    if not usage:
        return {}
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens}


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    backoff_base: float = 0.5  # seconds; attempt n waits up to base * 2**n (full jitter)
    backoff_cap: float = 30.0
    max_retry_after: float = 120.0  # a server asking for longer than this ends the call as failed


class LLMClient:
    """Send requests through the ledger with per-endpoint limits and retries. One per event loop."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: random.Random | None = None,
        provider_factory: Callable[[EndpointConfig], Provider] = provider_for,
        bucket_store: BucketStore | None = None,
    ) -> None:
        self.ledger = ledger
        # Where the endpoints' rate budgets live: this process only by default; a shared store
        # (audits.services.rate_limits) makes worker processes share them.
        self.bucket_store = bucket_store or MemoryBucketStore()
        self.retry = retry or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._provider_factory = provider_factory
        self._providers: dict[str, Provider] = {}
        self.limiters: dict[str, EndpointLimiter] = {}
        self._in_flight: dict[str, asyncio.Future] = {}
        self.stats = {"sent": 0, "cached": 0, "failed": 0, "attempts": 0, "rejected": 0}

    def _provider(self, endpoint: EndpointConfig) -> Provider:
        provider = self._providers.get(endpoint.key)
        if provider is None:
            provider = self._provider_factory(endpoint)
            self._providers[endpoint.key] = provider
            self.limiters[endpoint.key] = EndpointLimiter(
                key=f"endpoint:{endpoint.endpoint_id}" if endpoint.endpoint_id is not None else endpoint.key,
                max_concurrency=max(1, endpoint.max_concurrency),
                requests_per_minute=endpoint.requests_per_minute,
                tokens_per_minute=endpoint.tokens_per_minute,
                store=self.bucket_store,
                sleep=self._sleep,
            )
        return provider

    async def close(self) -> None:
        for provider in self._providers.values():
            await provider.close()
        self._providers.clear()

    async def complete(self, request: CallRequest) -> CallResult:
        request_hash = request.request_hash()
        shared = self._in_flight.get(request_hash)
        if shared is not None:
            result = await asyncio.shield(shared)
            return CallResult(**{**result.__dict__, "cached": True, "attempts": 0})
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        self._in_flight[request_hash] = future
        try:
            result = await self._complete(request, request_hash)
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters (if any) re-raise it themselves
            raise
        finally:
            self._in_flight.pop(request_hash, None)
        future.set_result(result)
        return result

    async def reject(self, result: CallResult, problem: str) -> None:
        """The caller could not use this answer (its content does not parse): mark its row unparsable,
        so that no later asking is served it (the next one goes out under a new attempt key)."""
        if result.ok and result.call_id is not None:
            self.stats["rejected"] += 1
            await self.ledger.reject(result.call_id, problem)

    async def _complete(self, request: CallRequest, request_hash: str) -> CallResult:
        key = request_hash
        for round_number in range(MAX_ATTEMPT_ROUNDS):
            key = attempt_key(request_hash, round_number)
            found = await self.ledger.lookup(key)
            if found is None:
                break
            if found.status == STATUS_OK or (not found.status and found.ok):
                self.stats["cached"] += 1
                return found
            # STATUS_UNPARSABLE: an answer nobody could use; ask again under the next round's key.
        else:
            self.stats["failed"] += 1
            return CallResult(
                ok=False,
                text=None,
                error=f"the answers of {MAX_ATTEMPT_ROUNDS} rounds of this request could not be used",
            )
        return await self._send(request, key)

    async def _send(self, request: CallRequest, key: str) -> CallResult:
        try:
            provider = self._provider(request.endpoint)
        except Exception as exc:  # noqa: BLE001 - a provider that cannot be built (its library missing) is a failed call
            return await self._unsendable(request, key, f"the provider cannot be loaded: {type(exc).__name__}: {exc}")
        limiter = self.limiters[request.endpoint.key]
        # Only a tokens-per-minute budget needs the estimate (it walks every message: keep it off the hot path).
        tpm = request.endpoint.tokens_per_minute
        estimated_tokens = estimate_tokens(request.messages, request.endpoint.max_tokens) if tpm else 0
        attempt_log: list[dict] = []
        error = ""
        billed = Usage()  # what the answers that could not be used cost: counted on the row, never dropped
        unusable: Exception | None = None  # the last such answer's error: its reasoning and finish reason are kept
        for attempt in range(1, self.retry.max_attempts + 1):
            retry_after: float | None = None
            reply = None
            spent = Usage()  # what this attempt's unusable answer was billed
            async with limiter.slot(estimated_tokens) as slot:
                started = time.perf_counter()
                self.stats["attempts"] += 1
                try:
                    reply = await provider.send(request)
                except RetryableError as exc:
                    error, retry_after, spent, unusable = str(exc), exc.retry_after, exc.usage, exc
                    billed += spent
                    if exc.rate_limited:
                        slot.rate_limited()
                except PermanentError as exc:
                    # Asked again, the same request would be answered the same way (a refused parameter, a used-up
                    # reasoning budget): it is not sent again.
                    error, unusable = str(exc), exc
                    billed += exc.usage
                    attempt_log.append({"attempt": attempt, "error": error, "retry": False, **_tokens(exc.usage)})
                    break
                except Exception as exc:  # noqa: BLE001 - a reply no rule foresaw is a failed attempt, not a lost dialogue
                    error = f"unexpected reply error: {type(exc).__name__}: {str(exc)[:200]}"
                    logger.warning("model call to %s raised %s", request.endpoint.key, error)
                else:
                    slot.succeeded(reply.prompt_tokens + reply.completion_tokens or None)
                    latency_ms = (time.perf_counter() - started) * 1000
            if reply is not None:
                # Written after the slot is given back: the next request goes on the wire while this one's
                # row is written (holding the slot for the write cost about a fifth of the engine's calls per second).
                paid = billed + reply.usage
                result = CallResult(
                    ok=True,
                    text=reply.text,
                    prompt_tokens=paid.prompt_tokens,
                    completion_tokens=paid.completion_tokens,
                    attempts=attempt,
                    latency_ms=latency_ms,
                    status=STATUS_OK,
                    reported_model=reply.model,
                    reasoning=reply.reasoning,
                    reasoning_tokens=paid.reasoning_tokens,
                    finish_reason=reply.finish_reason,
                )
                result.call_id = await self.ledger.record(request, key, result, attempt_log)
                self.stats["sent"] += 1
                return result
            if attempt == self.retry.max_attempts:
                attempt_log.append({"attempt": attempt, "error": error, "retry": False, **_tokens(spent)})
                error = f"{error} (gave up after {attempt} attempts)"
                break
            if retry_after is not None and retry_after > self.retry.max_retry_after:
                error = f"{error}; Retry-After of {retry_after:.0f} s is longer than {self.retry.max_retry_after:.0f} s"
                attempt_log.append({"attempt": attempt, "error": error, "retry": False})
                break
            wait = self._backoff(attempt, retry_after)
            attempt_log.append(
                {"attempt": attempt, "error": error, "retry": True, "wait": round(wait, 3), **_tokens(spent)}
            )
            logger.info("model call retry %d for %s in %.2f s: %s", attempt, request.endpoint.key, wait, error)
            await self._sleep(wait)
        result = CallResult(
            ok=False,
            text=None,
            attempts=len(attempt_log),
            error=error,
            status=STATUS_FAILED,
            prompt_tokens=billed.prompt_tokens,
            completion_tokens=billed.completion_tokens,
            reasoning_tokens=billed.reasoning_tokens,
            reasoning=getattr(unusable, "reasoning", ""),
            finish_reason=getattr(unusable, "finish_reason", ""),
        )
        result.call_id = await self.ledger.record(request, key, result, attempt_log)
        self.stats["failed"] += 1
        return result

    async def _unsendable(self, request: CallRequest, key: str, error: str) -> CallResult:
        """A request that could not be sent at all: recorded failed with its cause (no attempt was made)."""
        logger.warning("model call to %s not sent: %s", request.endpoint.key, error)
        result = CallResult(ok=False, text=None, attempts=0, error=error, status=STATUS_FAILED)
        log = [{"attempt": 0, "error": error, "retry": False}]
        result.call_id = await self.ledger.record(request, key, result, log)
        self.stats["failed"] += 1
        return result

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        ceiling = min(self.retry.backoff_cap, self.retry.backoff_base * (2 ** (attempt - 1)))
        jittered = self._rng.uniform(0, ceiling)
        if retry_after is not None:
            # The server's word is the minimum; a little jitter on top keeps clients from stampeding.
            return retry_after + self._rng.uniform(0, self.retry.backoff_base)
        return jittered
