"""Rate limits and adaptive concurrency of one endpoint, without Django.

- **Budgets.** Requests per minute and tokens per minute are token buckets refilled continuously at
  budget / 60 per second, holding at most one second's worth (`BURST_SECONDS`): providers enforce
  their per-minute limits over much shorter windows, so a minute's burst at start would be met with
  429s. A request *reserves* before it is sent — one request, and its estimated tokens (characters / 4
  plus `max_tokens`) — and waits until the bucket has refilled to cover it; the token reservation is
  corrected by the reply's `usage` afterwards. Reserving never fails and never retries, so one atomic
  operation per request suffices when the bucket is shared between processes. `bucket_reserve` is the
  one rule; every `BucketStore` applies it (`MemoryBucketStore` in one process, the Redis and database
  stores of `audits.services.rate_limits` across worker processes).
- **In-flight limit (AIMD).** Each process bounds the requests it has in flight by a limit that starts
  at the endpoint's `max_concurrency`, halves on a 429 (once per episode: only a request sent since the
  last decrease can cause the next one) and grows by one after every `increase_every` successes, never
  below 1 or above `max_concurrency`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

logger = logging.getLogger(__name__)

BURST_SECONDS = 1.0
# The completion estimate when an endpoint sets no max_tokens (corrected from usage afterwards).
DEFAULT_COMPLETION_TOKENS = 256
AIMD_INCREASE_EVERY = 10

OUTCOME_OK = "ok"
OUTCOME_RATE_LIMITED = "rate_limited"
OUTCOME_ERROR = "error"


def estimate_tokens(messages: list[dict], max_tokens: int | None) -> int:
    """Tokens a request will count against a TPM budget, before it is sent: about four characters a
    token for the prompt, plus the completion it may produce."""
    chars = sum(len(str(message.get("content") or "")) for message in messages)
    return chars // 4 + 1 + (max_tokens or DEFAULT_COMPLETION_TOKENS)


@dataclass(frozen=True)
class Budget:
    """One per-minute budget as a bucket: refill rate per second and capacity."""

    name: str  # "rpm" | "tpm": part of the shared bucket's key
    per_minute: int

    @property
    def rate(self) -> float:
        return self.per_minute / 60.0

    @property
    def capacity(self) -> float:
        return max(1.0, self.rate * BURST_SECONDS)


def bucket_reserve(
    tokens: float | None, stamp: float | None, *, now: float, rate: float, capacity: float, amount: float
) -> tuple[float, float, float]:
    """Take `amount` from a bucket last left holding `tokens` at time `stamp` (None: a new, full bucket).

    Returns (tokens left, new stamp, seconds to wait before the reserved amount is covered). The level
    may go below zero: that is the queue of reservations not yet covered, and the wait is how long the
    refill takes to reach zero again. A negative `amount` gives tokens back (a correction from usage),
    never beyond capacity."""
    if tokens is None or stamp is None:
        tokens, stamp = capacity, now
    elapsed = max(0.0, now - stamp)
    level = min(capacity, tokens + elapsed * rate) - amount
    level = min(capacity, level)
    wait = max(0.0, -level / rate) if rate > 0 else 0.0
    return level, max(now, stamp), wait


class BucketStore(Protocol):
    async def reserve(self, key: str, amount: float, rate: float, capacity: float) -> float:
        """Apply `bucket_reserve` atomically to the bucket `key`; return the seconds to wait."""


class MemoryBucketStore:
    """Buckets in a dict: one process's budget (tests, benchmarks, and the fallback when a shared
    store cannot be reached)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.buckets: dict[str, tuple[float, float]] = {}

    async def reserve(self, key: str, amount: float, rate: float, capacity: float) -> float:
        tokens, stamp = self.buckets.get(key, (None, None))
        tokens, stamp, wait = bucket_reserve(
            tokens, stamp, now=self.clock(), rate=rate, capacity=capacity, amount=amount
        )
        self.buckets[key] = (tokens, stamp)
        return wait


@dataclass
class Aimd:
    """The in-flight limit: halve on a 429 (once per episode), +1 per `increase_every` successes."""

    ceiling: int
    increase_every: int = AIMD_INCREASE_EVERY
    limit: int = 0
    successes: int = 0
    epoch: int = 0  # bumped by each decrease; a request remembers the epoch it was sent in
    decreases: int = 0
    rate_limited: int = 0

    def __post_init__(self) -> None:
        self.ceiling = max(1, self.ceiling)
        self.limit = self.limit or self.ceiling

    def on_success(self) -> bool:
        """Count a success; returns True when the limit grew."""
        self.successes += 1
        if self.successes >= self.increase_every and self.limit < self.ceiling:
            self.successes = 0
            self.limit += 1
            return True
        return False

    def on_rate_limited(self, sent_in_epoch: int) -> bool:
        """A 429 for a request sent in `sent_in_epoch`; returns True when the limit halved. Requests
        already in flight when the limit last halved were sent under the old limit and do not halve it
        again."""
        self.rate_limited += 1
        self.successes = 0
        if sent_in_epoch != self.epoch:
            return False
        self.epoch += 1
        self.decreases += 1
        self.limit = max(1, self.limit // 2)
        return True


class AdaptiveGate:
    """At most `aimd.limit` holders at once; waiters are served in order, the slot handed over on release."""

    def __init__(self, aimd: Aimd) -> None:
        self.aimd = aimd
        self.in_flight = 0
        self._waiters: deque[asyncio.Future] = deque()

    @property
    def waiting(self) -> int:
        return sum(1 for waiter in self._waiters if not waiter.done())

    async def acquire(self) -> None:
        if self.in_flight < self.aimd.limit and not self._waiters:
            self.in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # the releaser counted us in before waking us
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()
            else:
                self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.in_flight -= 1
        self.wake()

    def wake(self) -> None:
        while self._waiters and self.in_flight < self.aimd.limit:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)


@dataclass
class Slot:
    """One request's hold on the endpoint: the estimate it reserved and what came of it."""

    epoch: int
    estimated_tokens: int
    outcome: str = OUTCOME_ERROR
    used_tokens: int | None = None

    def succeeded(self, used_tokens: int | None = None) -> None:
        self.outcome, self.used_tokens = OUTCOME_OK, used_tokens

    def rate_limited(self) -> None:
        self.outcome = OUTCOME_RATE_LIMITED


@dataclass
class EndpointLimiter:
    """Everything that bounds one endpoint's requests in this process: the AIMD in-flight gate and the
    shared RPM/TPM buckets. Use `async with limiter.slot(estimated_tokens) as slot:` around each HTTP
    attempt and tell the slot how it went (`slot.succeeded(tokens)` / `slot.rate_limited()`)."""

    key: str  # names the endpoint's buckets in the shared store
    max_concurrency: int
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None
    store: Any = None  # a BucketStore; default: this process only
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep
    clock: Callable[[], float] = time.time  # of the fallback store
    increase_every: int = AIMD_INCREASE_EVERY
    waited_seconds: float = 0.0
    aimd: Aimd = field(init=False)
    gate: AdaptiveGate = field(init=False)
    _fallback: MemoryBucketStore = field(init=False)

    def __post_init__(self) -> None:
        self.aimd = Aimd(ceiling=self.max_concurrency, increase_every=self.increase_every)
        self.gate = AdaptiveGate(self.aimd)
        self._fallback = MemoryBucketStore(self.clock)
        self.store = self.store or self._fallback

    def budgets(self) -> list[Budget]:
        found = []
        if self.requests_per_minute:
            found.append(Budget("rpm", self.requests_per_minute))
        if self.tokens_per_minute:
            found.append(Budget("tpm", self.tokens_per_minute))
        return found

    async def _reserve(self, budget: Budget, amount: float) -> float:
        key = f"{self.key}:{budget.name}"
        try:
            return await self.store.reserve(key, amount, budget.rate, budget.capacity)
        except Exception as exc:  # an unreachable shared store must not fail the call: hold the budget locally
            logger.warning("shared rate-limit store failed for %s (%s); limiting in this process only", key, exc)
            return await self._fallback.reserve(key, amount, budget.rate, budget.capacity)

    def slot(self, estimated_tokens: int = 0) -> _SlotContext:
        return _SlotContext(self, estimated_tokens)

    async def acquire(self, estimated_tokens: int = 0) -> Slot:
        """Wait for an in-flight slot, then for the budget (inside the slot, so a process has at most
        `limit` reservations outstanding)."""
        await self.gate.acquire()
        try:
            wait = 0.0
            for budget in self.budgets():
                amount = 1 if budget.name == "rpm" else estimated_tokens
                wait = max(wait, await self._reserve(budget, amount))
            if wait > 0:
                self.waited_seconds += wait
                await self.sleep(wait)
        except BaseException:
            self.gate.release()
            raise
        return Slot(epoch=self.aimd.epoch, estimated_tokens=estimated_tokens)

    async def release(self, slot: Slot) -> None:
        self.gate.release()
        if slot.outcome == OUTCOME_OK:
            if self.aimd.on_success():
                self.gate.wake()
        elif slot.outcome == OUTCOME_RATE_LIMITED:
            self.aimd.on_rate_limited(slot.epoch)
        if self.tokens_per_minute and slot.used_tokens is not None and slot.used_tokens != slot.estimated_tokens:
            await self._reserve(Budget("tpm", self.tokens_per_minute), slot.used_tokens - slot.estimated_tokens)

    def snapshot(self) -> dict:
        """What the audit page shows of this endpoint in this process."""
        return {
            "limit": self.aimd.limit,
            "ceiling": self.aimd.ceiling,
            "in_flight": self.gate.in_flight,
            "waiting": self.gate.waiting,
            "rate_limited": self.aimd.rate_limited,
            "decreases": self.aimd.decreases,
            "requests_per_minute": self.requests_per_minute,
            "tokens_per_minute": self.tokens_per_minute,
            "waited_seconds": round(self.waited_seconds, 3),
        }


class _SlotContext:
    def __init__(self, limiter: EndpointLimiter, estimated_tokens: int) -> None:
        self.limiter = limiter
        self.estimated_tokens = estimated_tokens
        self.slot: Slot | None = None

    async def __aenter__(self) -> Slot:
        self.slot = await self.limiter.acquire(self.estimated_tokens)
        return self.slot

    async def __aexit__(self, *exc_info) -> None:
        await self.limiter.release(self.slot)
