"""Where the endpoints' rate budgets and in-flight limits are shared between worker processes.

The bucket rule is `audits.llm.limits.bucket_reserve`; this module only stores its state where every
worker process sees it, and applies the rule atomically there:

- **Redis** when the broker is Redis (`AUDIT_RATE_LIMIT_REDIS_URL`, by default the broker's URL): the
  bucket is a hash, read and written under WATCH/MULTI (retried when another process changed it).
- **The database** otherwise (`RateBucket`): one row per bucket, locked for the read-modify-write
  (`select_for_update` on PostgreSQL; SQLite's IMMEDIATE transactions serialise writers).

Each worker process also reports its limiters (in-flight limit, 429s, waits) to `EndpointLimitStatus`
at most once a second, so the audit page shows the limits live. Clocks are the processes' own
`time.time()`: workers sharing a budget are assumed to keep time (NTP).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import socket
import threading
import time

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from audits.llm.limits import bucket_reserve
from audits.llm.runtime import LoopRuntime
from audits.models import EndpointLimitStatus, ModelEndpoint, RateBucket

logger = logging.getLogger(__name__)

REDIS_KEY_PREFIX = "edufair:rate:"
REDIS_KEY_TTL_SECONDS = 3600
PUBLISH_EVERY_SECONDS = 1.0
HEARTBEAT_SECONDS = 30.0


class DatabaseBucketStore:
    """Buckets in `RateBucket` rows; the work runs on the runtime's database thread."""

    def __init__(self, runtime: LoopRuntime) -> None:
        self.runtime = runtime

    async def reserve(self, key: str, amount: float, rate: float, capacity: float) -> float:
        return await self.runtime.run_blocking(bucket_reserve_in_database, key, amount, rate, capacity)


def bucket_reserve_in_database(key: str, amount: float, rate: float, capacity: float) -> float:
    with transaction.atomic():
        RateBucket.objects.bulk_create([RateBucket(key=key, tokens=capacity, stamp=time.time())], ignore_conflicts=True)
        row = RateBucket.objects.select_for_update().get(key=key)
        tokens, stamp, wait = bucket_reserve(
            row.tokens, row.stamp, now=time.time(), rate=rate, capacity=capacity, amount=amount
        )
        RateBucket.objects.filter(key=key).update(tokens=tokens, stamp=stamp)
    return wait


class RedisBucketStore:
    """Buckets in Redis hashes ({tokens, stamp}), one optimistic transaction per reservation."""

    def __init__(self, url: str, namespace: str = "") -> None:
        self.url = url
        # Deployments (and test runs) sharing one Redis keep apart by their database's name.
        self.prefix = f"{REDIS_KEY_PREFIX}{namespace}:"
        self._client = None

    def _redis(self):
        if self._client is None:
            import redis.asyncio

            self._client = redis.asyncio.Redis.from_url(self.url, socket_timeout=5, socket_connect_timeout=5)
        return self._client

    async def reserve(self, key: str, amount: float, rate: float, capacity: float) -> float:
        from redis.exceptions import WatchError

        name = self.prefix + key
        async with self._redis().pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(name)
                    tokens, stamp = await pipe.hmget(name, "tokens", "stamp")
                    tokens, stamp, wait = bucket_reserve(
                        float(tokens) if tokens is not None else None,
                        float(stamp) if stamp is not None else None,
                        now=time.time(),
                        rate=rate,
                        capacity=capacity,
                        amount=amount,
                    )
                    pipe.multi()
                    pipe.hset(name, mapping={"tokens": repr(tokens), "stamp": repr(stamp)})
                    pipe.expire(name, REDIS_KEY_TTL_SECONDS)
                    await pipe.execute()
                    return wait
                except WatchError:
                    continue

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def rate_limit_redis_url() -> str:
    return settings.AUDIT_RATE_LIMIT_REDIS_URL


def rate_limit_store(runtime: LoopRuntime):
    """The store every worker process of this deployment shares."""
    url = rate_limit_redis_url()
    if url:
        return RedisBucketStore(url, namespace=str(connection.settings_dict["NAME"]))
    return DatabaseBucketStore(runtime)


# --- live status for the audit page --------------------------------------------------------------


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# The reporter's writes take this lock; while paused they are skipped (`limit_statuses_pause`).
_RECORDING = threading.Lock()
_recording_paused = False


def limit_statuses_pause(paused: bool) -> None:
    """Hold (True) or let go (False) the status reporter's writes. Once a pause returns, no write is in progress and
    none starts until it is let go: for what must not race the reporter, such as emptying a test database, whose
    TRUNCATE deadlocked with a write that landed a moment after a test's last call."""
    global _recording_paused
    with _RECORDING:
        _recording_paused = paused


def limit_statuses_record(*, worker: str, snapshots: dict[int, dict]) -> None:
    """Store this worker's limiter snapshots, one row per endpoint (that still exists). Runs on the
    runtime's database thread, whose connection it closes again: the reporter outlives every batch, and
    a session it held open between batches would be a stale one (and blocks dropping a test database)."""
    with _RECORDING:
        if _recording_paused:
            return
        try:
            _limit_statuses_write(worker=worker, snapshots=snapshots)
        finally:
            connection.close()


def _limit_statuses_write(*, worker: str, snapshots: dict[int, dict]) -> None:
    now = timezone.now()
    existing = set(ModelEndpoint.objects.filter(pk__in=list(snapshots)).values_list("pk", flat=True))
    for endpoint_id, snapshot in snapshots.items():
        if endpoint_id not in existing:
            continue
        fields = {
            "limit": snapshot["limit"],
            "ceiling": snapshot["ceiling"],
            "in_flight": max(0, snapshot["in_flight"]),
            "waiting": snapshot["waiting"],
            "rate_limited": snapshot["rate_limited"],
            "decreases": snapshot["decreases"],
            "waited_seconds": snapshot["waited_seconds"],
            "updated_at": now,
        }
        try:
            with transaction.atomic():
                updated = EndpointLimitStatus.objects.filter(endpoint_id=endpoint_id, worker=worker).update(**fields)
                if not updated:
                    EndpointLimitStatus.objects.bulk_create(
                        [EndpointLimitStatus(endpoint_id=endpoint_id, worker=worker, **fields)], ignore_conflicts=True
                    )
        except IntegrityError:  # the endpoint was deleted meanwhile
            continue


def client_limit_snapshots(client) -> dict[int, dict]:
    """{endpoint id: snapshot} of a client's limiters (the newest limiter of an endpoint that was edited)."""
    found = {}
    for limiter in client.limiters.values():
        if limiter.key.startswith("endpoint:") and limiter.key.split(":")[1].isdigit():
            found[int(limiter.key.split(":")[1])] = limiter.snapshot()
    return found


async def limit_statuses_publish_forever(runtime: LoopRuntime, client, worker: str) -> None:
    """On the runtime's loop: report the client's limiters when they change (at most once a second) and
    while requests are in flight or waiting, at least every `HEARTBEAT_SECONDS`."""
    last: dict[int, dict] = {}
    last_at = 0.0
    while True:
        await asyncio.sleep(PUBLISH_EVERY_SECONDS)
        snapshots = client_limit_snapshots(client)
        busy = any(s["in_flight"] or s["waiting"] for s in snapshots.values())
        if snapshots != last or (busy and time.monotonic() - last_at > HEARTBEAT_SECONDS):
            try:
                await runtime.run_blocking(functools.partial(limit_statuses_record, worker=worker, snapshots=snapshots))
            except Exception:  # the status is for people; a failed write must not stop the next one
                logger.exception("could not record the endpoints' limit status")
            # Not retried every second: the next change (or heartbeat while busy) writes it again.
            last, last_at = snapshots, time.monotonic()


def limit_statuses_start(runtime: LoopRuntime, client) -> None:
    """Start the status reporter of this process's client (once; called on the runtime's loop)."""
    if runtime.state.get("limit_status_task") is None:
        runtime.state["limit_status_task"] = asyncio.get_running_loop().create_task(
            limit_statuses_publish_forever(runtime, client, worker_name())
        )
