"""Crash drill: restart PostgreSQL, then Redis, while an audit runs on a real worker — the audit still
finishes with every dialogue exactly once, no duplicate turns or scores, and no model call repeated for
work already in the ledger. Extends test_audit_resume_after_kill.py (a killed worker) to the services.

Only where the database is PostgreSQL and the broker is Redis (CI: `.ci/run`); elsewhere `service_missing`
skips it locally and fails it when EDUFAIR_REQUIRE_SERVICES=1. It restarts the real local services:

- PostgreSQL with `pg_ctlcluster --skip-systemctl-redirect <version> main restart` (every connection —
  the worker's and this test's — is cut);
- Redis with `redis-cli shutdown nosave` and a fresh `redis-server` (no persistence: every queued and
  reserved message is gone, which is the harder case — the database, not the broker, must hold the work).

Run alone with:
  DATABASE_URL=postgres://postgres@127.0.0.1:5432/drills CELERY_BROKER_URL=redis://127.0.0.1:6379/12 \\
  DEBUG=1 .venv/bin/pytest audits/tests/test_drill_service_restarts.py
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest
from django.conf import settings as django_settings
from django.db import OperationalError, close_old_connections, connection
from django.db.models import Count

from audits.judge import METRICS
from audits.models import Audit, Dialogue, LLMCall, Turn, TurnScore
from audits.services.audit_lifecycle import audit_create, audit_launch
from audits.tests.engine_factories import explicit_conditions, make_questions, openai_endpoint
from audits.tests.openai_server import OpenAITestServer, messages_key
from conftest import service_missing, wait_for

LEASE_SECONDS = 3
# serial: it restarts the services every other test uses, so `make test` runs it alone after the parallel run.
pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.serial]


def require_postgres_and_redis() -> tuple[str, int]:
    """(PostgreSQL cluster version, Redis port), or skip/fail when the drill cannot run here."""
    if connection.vendor != "postgresql":
        service_missing("the service-restart drill needs DATABASE_URL=postgres://…")
    broker = urlparse(django_settings.CELERY_BROKER_URL)
    if broker.scheme != "redis" or broker.hostname not in ("127.0.0.1", "localhost"):
        service_missing("the service-restart drill needs a local Redis broker (CELERY_BROKER_URL=redis://127.0.0.1…)")
    clusters = sorted(Path("/etc/postgresql").glob("*")) if Path("/etc/postgresql").exists() else []
    if not clusters or not shutil.which("pg_ctlcluster") or not shutil.which("redis-server"):
        service_missing("the service-restart drill needs pg_ctlcluster and redis-server on this machine")
    return clusters[-1].name, broker.port or 6379


def restart_postgres(version: str) -> None:
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    database_back()


def database_back(timeout: float = 30.0) -> None:
    """This process's connection died with the server: drop it and wait until a new one works."""
    deadline = time.monotonic() + timeout
    while True:
        close_old_connections()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
            return
        except OperationalError:
            connection.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def restart_redis(port: int) -> None:
    subprocess.run(["redis-cli", "-p", str(port), "shutdown", "nosave"], capture_output=True, timeout=30)
    subprocess.run(
        [
            "redis-server",
            "--daemonize",
            "yes",
            "--bind",
            "127.0.0.1",
            "--port",
            str(port),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        check=True,
        capture_output=True,
        timeout=30,
    )
    wait_for(
        lambda: subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() == b"PONG",
        timeout=30,
        message="Redis to answer again",
    )


def done_count(audit) -> int:
    return Dialogue.objects.filter(audit=audit, status=Dialogue.Status.DONE).count()


def dialogues_by_status(audit):
    return Dialogue.objects.filter(audit=audit).values_list("status").annotate(n=Count("pk"))


def ledger_keys() -> set[str]:
    return {messages_key(c.purpose, c.request["messages"]) for c in LLMCall.objects.filter(status="ok")}


def test_audit_survives_postgres_and_redis_restarts(celery_worker_process, settings, monkeypatch):
    version, redis_port = require_postgres_and_redis()
    queue = celery_worker_process.queue
    settings.AUDITS_TASK_QUEUE = queue
    settings.AUDIT_CLAIM_LEASE_SECONDS = LEASE_SECONDS
    monkeypatch.setenv("CELERY_QUEUE", queue)
    monkeypatch.setenv("AUDIT_CLAIM_LEASE_SECONDS", str(LEASE_SECONDS))

    with OpenAITestServer(delay=0.05) as server:
        tutor = openai_endpoint("restart-tutor", server.base_url, max_concurrency=3)
        other = openai_endpoint("restart-other", server.base_url, max_concurrency=3)
        audit = audit_create(
            name="survives service restarts",
            tutors=[tutor],
            student_endpoint=other,
            judge_endpoint=other,
            questions=make_questions(16, prefix="restart"),
            conditions=explicit_conditions(),
            batch_size=4,
        )
        _, worker = celery_worker_process(concurrency=2, name="steadfast")
        audit_launch(audit=audit)
        total = Dialogue.objects.filter(audit=audit).count()
        assert total == 48

        # 1. PostgreSQL goes away under the worker (and under this test).
        wait_for(lambda: done_count(audit) >= 6, timeout=60, message="some dialogues done", processes=[worker])
        restart_postgres(version)
        at_pg_restart = done_count(audit)
        assert at_pg_restart < total, "the audit finished before PostgreSQL restarted; make it longer"

        # 2. Redis goes away with every queued message, once the audit made progress again.
        wait_for(
            lambda: done_count(audit) >= at_pg_restart + 6,
            timeout=90,
            message="progress after the PostgreSQL restart",
            processes=[worker],
        )
        ledger_before_redis = ledger_keys()
        served_before_redis = len(server.served)
        restart_redis(redis_port)
        at_redis_restart = done_count(audit)
        assert at_redis_restart < total, "the audit finished before Redis restarted; make it longer"

        try:
            wait_for(
                lambda: Audit.objects.get(pk=audit.pk).status == Audit.Status.FINISHED,
                timeout=120,
                message="the audit to finish after both restarts",
                processes=[worker],
            )
        except AssertionError as stalled:
            states = dict(dialogues_by_status(audit))
            log = Path(worker.log_path).read_text()[-4000:]
            raise AssertionError(f"{stalled}; dialogues by status: {states}\nworker log:\n{log}") from None
        served_after_redis = server.served[served_before_redis:]

    # Every dialogue exactly once, done; the same worker process carried on through both restarts.
    assert worker.poll() is None
    dialogues = Dialogue.objects.filter(audit=audit)
    assert dialogues.count() == total
    failed = list(dialogues.exclude(status=Dialogue.Status.DONE).values_list("pk", "status", "error"))
    assert failed == [], "an outage is never a dialogue's failure"
    # No duplicate turns or scores.
    for dialogue in dialogues:
        indexes = list(dialogue.turns.values_list("index", flat=True))
        assert indexes == list(range(len(indexes)))
    per_turn = TurnScore.objects.filter(turn__dialogue__audit=audit).values("turn").annotate(n=Count("pk"))
    assert {row["n"] for row in per_turn} == {len(METRICS)}
    assert per_turn.count() == Turn.objects.filter(dialogue__audit=audit, role="tutor").count()
    # One ledger row per distinct request, and nothing already in the ledger was asked again.
    assert LLMCall.objects.values("request_hash").annotate(n=Count("pk")).filter(n__gt=1).count() == 0
    repeated = [r for r in served_after_redis if r.status == 200 and r.messages_key in ledger_before_redis]
    assert repeated == []
    assert served_after_redis, "the work after the Redis restart was done by sending the missing calls"
