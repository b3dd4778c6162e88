"""The client's in-flight limit under a 429 storm (audits/llm/client.py with audits/llm/limits.py): the
limit backs off while the server answers 429, every call still ends answered after its retries, and once
the storm has passed the limit grows back to the endpoint's max_concurrency. No database, no HTTP."""

import asyncio

from audits.llm.calls import CallRequest, EndpointConfig, MemoryLedger, ProviderReply, RetryableError
from audits.llm.client import LLMClient, RetryPolicy

CONCURRENCY = 8
STORM = 40  # the first 40 answers are 429s


class StormyProvider:
    def __init__(self, client_ref: dict) -> None:
        self.client_ref = client_ref
        self.storm = STORM
        self.in_flight = 0
        self.seen: list[tuple[int, int]] = []  # (in flight, the limit) at each request

    async def send(self, request: CallRequest) -> ProviderReply:
        limiter = next(iter(self.client_ref["client"].limiters.values()))
        self.in_flight += 1
        self.seen.append((self.in_flight, limiter.aimd.limit))
        try:
            await asyncio.sleep(0.002)
            if self.storm > 0:
                self.storm -= 1
                raise RetryableError("HTTP 429", 0.0, rate_limited=True)
            return ProviderReply(text="fine", prompt_tokens=3, completion_tokens=1)
        finally:
            self.in_flight -= 1

    async def close(self) -> None:
        pass


def test_the_limit_halves_in_a_429_storm_and_grows_back_after_it():
    endpoint = EndpointConfig(
        key="endpoint:1:x", provider="openai", model="m", max_concurrency=CONCURRENCY, endpoint_id=1
    )
    ref: dict = {}
    provider = StormyProvider(ref)

    async def run():
        client = LLMClient(
            MemoryLedger(),
            retry=RetryPolicy(max_attempts=20, backoff_base=0.002),
            provider_factory=lambda _: provider,
        )
        ref["client"] = client
        requests = [
            CallRequest(endpoint=endpoint, purpose="tutor", messages=[{"role": "user", "content": f"q{i}"}])
            for i in range(200)
        ]
        results = await asyncio.gather(*(client.complete(r) for r in requests))
        return client, results

    client, results = asyncio.run(run())
    limiter = client.limiters[endpoint.key]
    assert all(r.ok for r in results)
    assert client.stats["attempts"] == 200 + STORM
    snapshot = limiter.snapshot()
    assert snapshot["rate_limited"] == STORM and snapshot["decreases"] >= 3
    # While the storm lasted the limit went down to a few requests, and so did the requests in flight.
    assert min(limit for _, limit in provider.seen) <= 2
    low = [in_flight for in_flight, limit in provider.seen if limit <= 2]
    assert low and max(low[len(low) // 2 :]) <= 2
    # 200 successes at +1 per 10: back to the ceiling, never above it.
    assert snapshot["limit"] == CONCURRENCY and max(in_flight for in_flight, _ in provider.seen) <= CONCURRENCY
    assert snapshot["in_flight"] == 0


class SlowWriteLedger(MemoryLedger):
    """A ledger whose writes wait until the test lets them through."""

    def __init__(self) -> None:
        super().__init__()
        self.writes_may_finish = asyncio.Event()
        self.writes_started = 0

    async def record(self, request, request_hash, result, attempt_log) -> int:
        self.writes_started += 1
        await self.writes_may_finish.wait()
        return await super().record(request, request_hash, result, attempt_log)


class CountingProvider:
    def __init__(self) -> None:
        self.sent = 0

    async def send(self, request: CallRequest) -> ProviderReply:
        self.sent += 1
        return ProviderReply(text="fine", prompt_tokens=3, completion_tokens=1)

    async def close(self) -> None:
        pass


def test_the_slot_is_given_back_before_the_answer_is_written_to_the_ledger():
    """A slot covers a request on the wire, not the ledger write after it: with one slot, the second
    request is sent while the first answer's row is still being written (holding the slot for the write
    cost the engine about a fifth of its calls per second: benchmarks/RESULTS.md, engine throughput set 6)."""
    endpoint = EndpointConfig(key="endpoint:1:x", provider="openai", model="m", max_concurrency=1, endpoint_id=1)
    provider = CountingProvider()

    async def run():
        ledger = SlowWriteLedger()
        client = LLMClient(ledger, provider_factory=lambda _: provider)
        requests = [
            CallRequest(endpoint=endpoint, purpose="tutor", messages=[{"role": "user", "content": f"q{i}"}])
            for i in range(2)
        ]
        calls = [asyncio.create_task(client.complete(r)) for r in requests]
        for _ in range(50):
            await asyncio.sleep(0)
        sent_while_writing, writing = provider.sent, ledger.writes_started
        ledger.writes_may_finish.set()
        results = await asyncio.gather(*calls)
        return sent_while_writing, writing, results, client.limiters[endpoint.key].snapshot()

    sent_while_writing, writing, results, snapshot = asyncio.run(run())
    assert (sent_while_writing, writing) == (2, 2)
    assert all(r.ok and r.call_id is not None for r in results)
    assert snapshot["in_flight"] == 0
