"""A real Celery worker, in its own process, takes a task from the configured broker and writes a row.

Runs on the embedded default (SQLite + kombu's SQLAlchemy transport) in `make test`, and on
PostgreSQL + Redis in CI. Why this is not eager mode: docs/ARCHITECTURE.md, "Testing".
"""

import pytest
from django.db import transaction

from conftest import wait_for
from edufair_web.accounts.models import WorkerHeartbeat
from edufair_web.accounts.tasks import worker_heartbeat


@pytest.mark.services
def test_worker_process_runs_a_task_enqueued_on_commit(celery_worker_process, researcher):
    queue, process = celery_worker_process(concurrency=2)

    with transaction.atomic():
        transaction.on_commit(lambda: worker_heartbeat.apply_async(queue=queue))
        assert WorkerHeartbeat.objects.filter(last_task_at__isnull=False).count() == 0

    beat = wait_for(
        lambda: WorkerHeartbeat.objects.filter(hostname__contains=queue, last_task_at__isnull=False).first(),
        timeout=90,
        message="the worker to run the heartbeat task",
        processes=[process],
    )
    assert process.poll() is None, "the worker exited"
    assert beat.last_seen >= beat.started_at
    # The worker's own heartbeat thread writes the row too: /healthz sees it alive (its details are for
    # signed-in researchers and operators).
    from django.test import Client

    client = Client()
    client.force_login(researcher)
    health = client.get("/healthz").json()
    assert any(w["hostname"] == beat.hostname and w["alive"] for w in health["worker"]["workers"])
