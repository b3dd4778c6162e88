"""The shared bucket stores (audits/services/rate_limits.py): reservations made at the same moment from
several threads, each with its own connection, are applied one after another — every one gets its own
place in the queue (no two the same slot: the moment it was made plus its wait), as workers sharing an
endpoint's budget need. The database store runs on the test database (SQLite locally, PostgreSQL in CI), the
Redis store on the local Redis."""

import asyncio
import threading
import time
import uuid

import pytest
from django.db import connection, connections

from audits.services.rate_limits import RedisBucketStore, bucket_reserve_in_database
from conftest import service_missing

THREADS = 4
PER_THREAD = 5


def _slot(before: float, wait: float) -> float:
    """When a reservation may go: the moment it was made (between `before` and now) plus its wait."""
    return (before + time.time()) / 2 + wait


def _database_reserve(key: str) -> list[float]:
    try:
        return [_slot(time.time(), bucket_reserve_in_database(key, 1, 1.0, 1.0)) for _ in range(PER_THREAD)]
    finally:
        connections.close_all()


def _redis_reserve(url: str, namespace: str, key: str) -> list[float]:
    async def run() -> list[float]:
        store = RedisBucketStore(url, namespace=namespace)
        try:
            return [_slot(time.time(), await store.reserve(key, 1, 1.0, 1.0)) for _ in range(PER_THREAD)]
        finally:
            await store.close()

    return asyncio.run(run())


def _redis_url() -> str:
    import redis

    url = "redis://127.0.0.1:6379/15"
    try:
        redis.Redis.from_url(url, socket_connect_timeout=1).ping()
    except redis.RedisError:
        service_missing("Redis is not reachable on 127.0.0.1:6379")
    return url


def _from_threads(target, *args) -> list[float]:
    results: list[list[float]] = []
    lock = threading.Lock()

    def work() -> None:
        found = target(*args)
        with lock:
            results.append(found)

    threads = [threading.Thread(target=work) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(results) == THREADS
    return sorted(value for found in results for value in found)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("store", ["database", pytest.param("redis", marks=pytest.mark.services)])
def test_concurrent_reservations_each_take_their_own_place(store):
    key = f"test-{uuid.uuid4().hex[:8]}:rpm"
    if store == "database":
        slots = _from_threads(_database_reserve, key)
    else:
        slots = _from_threads(_redis_reserve, _redis_url(), str(connection.settings_dict["NAME"]), key)
    # One request a second, a bucket of one: the reservations are placed 0, 1, 2, … s after the first, however
    # late a thread made its own (a slow machine shortens the waits, not the slots); a lost update would give two
    # of them the same place.
    assert len(slots) == THREADS * PER_THREAD
    after_first = [slot - slots[0] for slot in slots]
    places = [round(t) for t in after_first]
    assert places == list(range(THREADS * PER_THREAD)), after_first
    assert all(abs(t - p) < 0.5 for t, p in zip(after_first, places, strict=True))
