"""The throttles' store is shared by every process by default: CACHE_URL's Redis, else the Redis broker's next
database, else a table in the database (made by a migration); two gunicorn processes count log-ins once."""

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from conftest import wait_for, worker_environment
from edufair_web.settings import CACHE_TABLE, shared_cache

ROOT = Path(__file__).resolve().parents[2]
DATABASE_CACHE = "django.core.cache.backends.db.DatabaseCache"
REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"


@pytest.mark.parametrize(
    ("cache_url", "broker_url", "backend", "location"),
    [
        ("", "sqla+sqlite:////data/celery-broker.sqlite3", DATABASE_CACHE, CACHE_TABLE),
        ("", "", DATABASE_CACHE, CACHE_TABLE),
        ("", "redis://redis:6379/0", REDIS_CACHE, "redis://redis:6379/1"),
        ("", "rediss://:secret@redis.internal:6380", REDIS_CACHE, "rediss://:secret@redis.internal:6380/1"),
        ("", "redis://redis:6379/15", REDIS_CACHE, "redis://redis:6379/0"),
        ("redis://cache.internal:6379/3", "redis://redis:6379/0", REDIS_CACHE, "redis://cache.internal:6379/3"),
        ("redis://cache.internal:6379/3", "", REDIS_CACHE, "redis://cache.internal:6379/3"),
    ],
)
def test_the_default_cache_is_shared_and_never_the_brokers_database(cache_url, broker_url, backend, location):
    config = shared_cache(cache_url, broker_url)
    assert (config["BACKEND"], config["LOCATION"]) == (backend, location)


def token_request(api, username: str):
    return api.post("/api/auth/token/", {"username": username, "password": "a-wrong-password"})


@pytest.mark.django_db
def test_without_redis_the_counts_are_rows_of_the_migrations_table(settings):
    """The default store on this test database (SQLite or PostgreSQL): its table exists without a manual step."""
    settings.CACHES = {**settings.CACHES, "default": shared_cache("", "")}
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login": "2/minute"}
    api = APIClient(REMOTE_ADDR="203.0.113.40")
    assert [token_request(api, f"nobody-{n}").status_code for n in range(3)] == [400, 400, 429]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT cache_key FROM {connection.ops.quote_name(CACHE_TABLE)}")  # noqa: S608 - a constant
        keys = [row[0] for row in cursor.fetchall()]
    assert any(key.endswith("throttle_login_203.0.113.40") for key in keys)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def answers(port: int, path: str, data: dict | None = None, address: str = "") -> int:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, headers={"X-Forwarded-For": address})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - the test's own server
            return response.status
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


@pytest.mark.slow
def test_two_gunicorn_processes_count_log_ins_once(transactional_db, tmp_path):
    """No CACHE_URL, no Redis broker: two servers on one database (the test's SQLite file, or PostgreSQL) refuse the
    sixth log-in of a 5/minute budget, as one process would (with per-process counts they let ten through)."""
    env = {key: value for key, value in worker_environment().items() if key not in {"CACHE_URL", "CELERY_BROKER_URL"}}
    env.update(THROTTLE_LOGIN_RATE="5/minute", TRUSTED_PROXY_COUNT="1", DEBUG="1")
    ports = [free_port(), free_port()]
    servers = []
    for n, port in enumerate(ports):
        log = open(tmp_path / f"gunicorn-{n}.log", "w")  # noqa: SIM115 - closed with the process
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "edufair_web.wsgi:application", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "--threads", "1"],  # fmt: skip
            env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        server.log_path = tmp_path / f"gunicorn-{n}.log"
        servers.append(server)
    try:
        for port in ports:
            wait_for(lambda port=port: answers(port, "/accounts/login/") == 200, timeout=30, processes=servers,
                     message=f"gunicorn on {port}")  # fmt: skip
        address = f"198.51.100.{uuid.uuid4().int % 250 + 1}"
        started = time.monotonic()
        statuses = [
            answers(ports[n % 2], "/api/auth/token/", {"username": f"guess-{n}", "password": "x"}, address)
            for n in range(6)
        ]
        assert time.monotonic() - started < 50  # all six inside the budget's minute
        assert statuses == [400, 400, 400, 400, 400, 429]
        # Another client address has its own budget, on either process.
        assert answers(ports[1], "/api/auth/token/", {"username": "guess", "password": "x"}, "198.51.100.251") == 400
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
