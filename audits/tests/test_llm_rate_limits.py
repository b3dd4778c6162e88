"""The pure rate-limit parts (audits/llm/limits.py): the token-bucket rule, the AIMD in-flight limit,
the gate that enforces it, and an endpoint's limiter holding a budget on a simulated clock. No database."""

import asyncio

import pytest

from audits.llm.limits import (
    AdaptiveGate,
    Aimd,
    Budget,
    EndpointLimiter,
    MemoryBucketStore,
    bucket_reserve,
    estimate_tokens,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_new_bucket_is_full_and_reservations_beyond_it_queue_at_the_refill_rate():
    rate, capacity = 2.0, 2.0
    tokens = stamp = None
    waits = []
    for _ in range(6):
        tokens, stamp, wait = bucket_reserve(tokens, stamp, now=0.0, rate=rate, capacity=capacity, amount=1)
        waits.append(wait)
    # Two covered at once, then one every 1/rate seconds.
    assert waits == [0.0, 0.0, 0.5, 1.0, 1.5, 2.0]
    # Refill is capped at capacity: an idle minute buys no more than one burst.
    tokens, stamp, wait = bucket_reserve(tokens, stamp, now=60.0, rate=rate, capacity=capacity, amount=1)
    assert (tokens, wait) == (1.0, 0.0)


def test_a_refund_never_fills_past_capacity():
    tokens, stamp, _ = bucket_reserve(None, None, now=0.0, rate=10, capacity=10, amount=300)
    assert tokens == -290
    tokens, stamp, wait = bucket_reserve(tokens, stamp, now=0.0, rate=10, capacity=10, amount=-250)
    assert (tokens, wait) == (-40, 4.0)
    tokens, _, _ = bucket_reserve(tokens, stamp, now=0.0, rate=10, capacity=10, amount=-1000)
    assert tokens == 10


def test_budgets_hold_a_second_worth_and_estimates_count_prompt_and_completion():
    assert (Budget("rpm", 120).rate, Budget("rpm", 120).capacity) == (2.0, 2.0)
    assert Budget("rpm", 6).capacity == 1.0  # never less than one request
    assert estimate_tokens([{"content": "x" * 400}, {"content": None}], 50) == 151
    assert estimate_tokens([], None) == 257


def test_aimd_halves_once_per_episode_and_grows_by_one_per_n_successes():
    aimd = Aimd(ceiling=8, increase_every=3)
    assert aimd.limit == 8
    sent_epoch = aimd.epoch
    # Four requests sent under the old limit all come back 429: the limit halves once, not four times.
    assert [aimd.on_rate_limited(sent_epoch) for _ in range(4)] == [True, False, False, False]
    assert aimd.limit == 4
    assert aimd.on_rate_limited(aimd.epoch) and aimd.limit == 2
    assert aimd.on_rate_limited(aimd.epoch) and aimd.on_rate_limited(aimd.epoch)
    assert aimd.limit == 1  # never below one
    grown = [aimd.on_success() for _ in range(3 * 10)]
    assert grown.count(True) == 7 and aimd.limit == 8  # and never above the ceiling
    assert aimd.rate_limited == 7 and aimd.decreases == 4


def test_the_gate_never_lets_more_than_the_limit_in_and_follows_a_lower_limit():
    async def scenario():
        aimd = Aimd(ceiling=4)
        gate = AdaptiveGate(aimd)
        peak = {"now": 0, "max": 0, "after_cut": 0}

        async def holder(i: int) -> None:
            await gate.acquire()
            peak["now"] += 1
            peak["max"] = max(peak["max"], peak["now"])
            if aimd.limit == 1:
                peak["after_cut"] = max(peak["after_cut"], peak["now"])
            await asyncio.sleep(0.001)
            if i == 0:
                aimd.on_rate_limited(aimd.epoch)
                aimd.on_rate_limited(aimd.epoch)  # 4 -> 2 -> 1
            peak["now"] -= 1
            gate.release()

        await asyncio.gather(*(holder(i) for i in range(20)))
        # A waiter cancelled before its turn leaves no slot behind.
        await gate.acquire()
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        gate.release()
        return peak, gate.in_flight

    peak, in_flight = asyncio.run(scenario())
    assert peak["max"] == 4
    assert peak["after_cut"] <= 4  # holders admitted before the cut finish; new ones wait
    assert in_flight == 0


@pytest.mark.parametrize("rpm", [120, 600])
def test_the_limiter_holds_requests_per_minute_on_a_simulated_clock(rpm):
    clock = Clock()
    limiter = EndpointLimiter(
        key="endpoint:1", max_concurrency=4, requests_per_minute=rpm, store=MemoryBucketStore(clock), sleep=clock.sleep
    )

    async def run() -> list[float]:
        sent_at = []
        for _ in range(rpm // 2):  # half a minute's budget
            async with limiter.slot() as slot:
                sent_at.append(clock.now)
                slot.succeeded()
        return sent_at

    sent_at = asyncio.run(run())
    elapsed = sent_at[-1] - sent_at[0]
    rate = (len(sent_at) - 1) / elapsed * 60
    assert rpm * 0.97 <= rate <= rpm * 1.05


def test_token_reservations_are_corrected_from_usage():
    clock = Clock()
    store = MemoryBucketStore(clock)
    limiter = EndpointLimiter(
        key="endpoint:2", max_concurrency=2, tokens_per_minute=6000, store=store, sleep=clock.sleep
    )

    async def run() -> None:
        async with limiter.slot(estimated_tokens=300) as slot:
            slot.succeeded(used_tokens=40)
        assert clock.now == pytest.approx(1002.0)  # 100 tokens a second from a full bucket of 100: 2 s for 300
        async with limiter.slot(estimated_tokens=100) as slot:
            slot.succeeded(used_tokens=100)

    asyncio.run(run())
    # The 260 tokens estimated but not used came back: the second request did not wait (without the
    # correction the bucket would have been empty and it would have waited 1 s).
    assert clock.now == pytest.approx(1002.0)
    tokens, _ = store.buckets["endpoint:2:tpm"]
    assert tokens == pytest.approx(0.0)


def test_a_failing_shared_store_falls_back_to_this_process():
    class Broken:
        async def reserve(self, *args):
            raise ConnectionError("redis is down")

    clock = Clock()
    limiter = EndpointLimiter(
        key="endpoint:3", max_concurrency=1, requests_per_minute=60, store=Broken(), sleep=clock.sleep, clock=clock
    )

    async def run() -> None:
        for _ in range(3):
            async with limiter.slot() as slot:
                slot.rate_limited()

    asyncio.run(run())
    assert clock.now == pytest.approx(1002.0)  # still one a second
    assert limiter.snapshot()["rate_limited"] == 3 and limiter.snapshot()["in_flight"] == 0
