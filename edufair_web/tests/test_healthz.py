"""/healthz: "ok" or "error" (503) for anyone (load balancers); the database, the broker and the last time each
worker answered for signed-in researchers and operators only."""

from datetime import timedelta

import pytest
from django.utils import timezone

from edufair_web.accounts.models import WorkerHeartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_status():
    """Each test probes afresh: the anonymous status is kept a few seconds per process."""
    from edufair_web.accounts.selectors import health_status_forget

    health_status_forget()
    yield
    health_status_forget()


def test_healthz_reports_database_and_broker(researcher_client):
    response = researcher_client.get("/healthz")
    assert response.status_code == 200
    report = response.json()
    assert report["status"] == "ok"
    assert report["database"]["ok"] is True
    assert report["broker"]["ok"] is True
    assert report["worker"] == {"alive": False, "alive_count": 0, "last_seen": None, "workers": []}


def test_healthz_tells_a_fresh_heartbeat_from_a_stale_one(client, make_user):
    client.force_login(make_user("operator"))
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="fresh@a", started_at=now, last_seen=now)
    WorkerHeartbeat.objects.create(hostname="stale@b", started_at=now, last_seen=now - timedelta(minutes=10))
    worker = client.get("/healthz").json()["worker"]
    assert worker["alive"] is True and worker["alive_count"] == 1
    assert {w["hostname"]: w["alive"] for w in worker["workers"]} == {"fresh@a": True, "stale@b": False}


def test_the_system_page_marks_silent_workers_and_leaves_gone_ones_out(client, make_user):
    client.force_login(make_user("operator"))
    now = timezone.now()
    for name, age in (("fresh@a", timedelta(0)), ("silent@b", timedelta(minutes=10)), ("gone@c", timedelta(hours=3))):
        WorkerHeartbeat.objects.create(hostname=name, started_at=now - age, last_seen=now - age)
    states = {w["hostname"]: w["state"] for w in client.get("/healthz").json()["worker"]["workers"]}
    assert states == {"fresh@a": "alive", "silent@b": "silent", "gone@c": "gone"}
    page = client.get("/system/").content.decode()
    assert '<tr data-worker-state="alive"><td>fresh@a</td>' in page
    assert '<tr data-worker-state="silent"><td>silent@b</td>' in page
    assert "gone@c" not in page and "1 gone worker (no heartbeat for over 60 minutes) not listed" in page
    # The last heartbeat as a time to the minute, not an ISO string with microseconds.
    assert now.isoformat() not in page and f"{timezone.localtime(now):%Y-%m-%d %H:%M}" in page


def test_a_page_whose_workers_are_all_gone_says_none_answered_lately(client, make_user):
    client.force_login(make_user("researcher"))
    old = timezone.now() - timedelta(days=2)
    WorkerHeartbeat.objects.create(hostname="gone@c", started_at=old, last_seen=old)
    page = client.get("/system/").content.decode()
    assert "No worker has answered in the last 60 minutes" in page and "No worker has ever answered" not in page


def test_healthz_answers_503_when_the_broker_is_unreachable(researcher_client, monkeypatch):
    from kombu import Connection

    from edufair_web.accounts import selectors

    # Nothing listens on port 1. The app's own configuration is left alone: patching Celery's
    # conf leaks into later tests through its cached connection settings.
    monkeypatch.setattr(selectors, "broker_connection", lambda: Connection("redis://127.0.0.1:1/0"))
    response = researcher_client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["broker"]["ok"] is False


def test_anonymous_healthz_answers_the_status_only(client):
    now = timezone.now()
    WorkerHeartbeat.objects.create(hostname="celery@internal-host-7", started_at=now, last_seen=now)
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert b"internal-host-7" not in response.content


def test_anonymous_healthz_still_answers_503_when_a_service_is_down(client, monkeypatch):
    from kombu import Connection

    from edufair_web.accounts import selectors

    monkeypatch.setattr(selectors, "broker_connection", lambda: Connection("redis://127.0.0.1:1/0"))
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "error"}  # not the error text, which names hosts and ports


@pytest.mark.parametrize("role", ["annotator", "adjudicator"])
def test_other_signed_in_roles_get_the_status_only(client, make_user, role):
    client.force_login(make_user(role))
    assert client.get("/healthz").json() == {"status": "ok"}


def test_anonymous_healthz_probes_at_most_once_per_period(researcher_client, settings, monkeypatch):
    from django.test import Client

    from edufair_web.accounts import selectors

    client = Client()  # anonymous, beside the researcher's

    probes = []
    probe = selectors._database_probe
    monkeypatch.setattr(selectors, "_database_probe", lambda: probes.append(1) or probe())
    settings.HEALTHZ_STATUS_SECONDS = 60
    for _ in range(20):
        assert client.get("/healthz").json() == {"status": "ok"}
    assert len(probes) == 1
    researcher_client.get("/healthz")  # staff get a live probe
    assert len(probes) == 2

    settings.HEALTHZ_STATUS_SECONDS = 0  # the period is over: the next anonymous call probes again
    client.get("/healthz")
    assert len(probes) == 3
