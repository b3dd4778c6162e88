"""The heartbeat row's times only move forward: the beat thread and the heartbeat task write it at about the same
moment, each with the time it read before its statement, and the statement that lands last may carry the
earlier reading (seen in CI under load: last_seen 30 ms before started_at)."""

from datetime import UTC, datetime, timedelta

import pytest

from edufair_web.accounts import services
from edufair_web.accounts.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db

LATER = datetime(2026, 12, 1, 22, 21, 28, 253438, tzinfo=UTC)
EARLIER = LATER - timedelta(milliseconds=31)


def record_at(monkeypatch, moment, **kwargs):
    monkeypatch.setattr(services.timezone, "now", lambda: moment)
    services.worker_heartbeat_record(hostname="w0@vm", **kwargs)


def test_a_write_that_lands_last_with_an_earlier_reading_moves_no_time_back(monkeypatch):
    record_at(monkeypatch, LATER)  # the beat thread creates the row
    record_at(monkeypatch, EARLIER, from_task=True)  # the task read the clock first but wrote second
    beat = WorkerHeartbeat.objects.get()
    assert (beat.started_at, beat.last_seen, beat.last_task_at) == (LATER, LATER, EARLIER)
    assert beat.last_seen >= beat.started_at

    record_at(monkeypatch, LATER + timedelta(seconds=5), from_task=True)
    record_at(monkeypatch, LATER + timedelta(seconds=4), from_task=True)
    beat.refresh_from_db()
    assert beat.last_seen == beat.last_task_at == LATER + timedelta(seconds=5)
    assert beat.started_at == LATER and WorkerHeartbeat.objects.count() == 1
