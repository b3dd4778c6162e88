"""Reads for accounts: the state of the database, the broker and the workers (/healthz), heartbeats and groups."""

import threading
import time
from dataclasses import asdict, dataclass

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import connection
from django.db.models import QuerySet
from django.utils import timezone

from edufair_web.celery import app

from .models import WorkerHeartbeat


@dataclass
class Check:
    ok: bool
    detail: str
    seconds: float


def _timed(probe) -> Check:
    started = time.perf_counter()
    try:
        detail = probe()
        ok = True
    except Exception as exc:  # a health check reports failures; it never raises them
        detail, ok = f"{type(exc).__name__}: {exc}", False
    return Check(ok=ok, detail=detail, seconds=round(time.perf_counter() - started, 4))


def _database_probe() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return connection.vendor


def broker_connection():
    """A new connection to the configured broker (not from the producer pool)."""
    return app.connection_for_write()


def _broker_probe() -> str:
    with broker_connection() as conn:
        conn.ensure_connection(max_retries=1, timeout=3)
        return conn.transport_cls if isinstance(conn.transport_cls, str) else conn.transport.driver_type


ALIVE, SILENT, GONE = "alive", "silent", "gone"


def worker_state(last_seen, now=None) -> str:
    """The one rule for a worker's heartbeat age: "alive" within WORKER_ALIVE_SECONDS, "silent" until
    WORKER_GONE_SECONDS (a stall, or a restart under way), then "gone" (stopped, or restarted under another name)."""
    age = ((now or timezone.now()) - last_seen).total_seconds()
    if age <= settings.WORKER_ALIVE_SECONDS:
        return ALIVE
    return SILENT if age <= settings.WORKER_GONE_SECONDS else GONE


def system_health() -> dict:
    database = _timed(_database_probe)
    broker = _timed(_broker_probe)
    workers = []
    last_seen = None
    if database.ok:
        now = timezone.now()
        for beat in WorkerHeartbeat.objects.order_by("-last_seen")[:50]:
            state = worker_state(beat.last_seen, now)
            workers.append(
                {
                    "hostname": beat.hostname,
                    "last_seen": beat.last_seen.isoformat(),
                    "alive": state == ALIVE,
                    "state": state,
                }
            )
            last_seen = max(last_seen or beat.last_seen, beat.last_seen)
    alive = [w for w in workers if w["alive"]]
    return {
        "status": "ok" if database.ok and broker.ok else "error",
        "database": asdict(database),
        "broker": asdict(broker),
        "worker": {
            "alive": bool(alive),
            "alive_count": len(alive),
            "last_seen": last_seen.isoformat() if last_seen else None,
            "workers": workers,
        },
    }


# The status anonymous callers get: probed at most once per HEALTHZ_STATUS_SECONDS in a process, so an unthrottled
# public URL cannot make every request cost a database and a broker round trip.
_status_lock = threading.Lock()
_status: dict = {"value": None, "at": 0.0}


def health_status() -> str:
    """ "ok" or "error", from a probe at most HEALTHZ_STATUS_SECONDS old (this process's)."""
    with _status_lock:
        now = time.monotonic()
        if _status["value"] is None or now - _status["at"] >= settings.HEALTHZ_STATUS_SECONDS:
            _status["value"], _status["at"] = system_health()["status"], now
        return _status["value"]


def health_status_forget() -> None:
    """Probe afresh on the next call (tests that change a service)."""
    with _status_lock:
        _status["value"] = None


def worker_heartbeats() -> QuerySet[WorkerHeartbeat]:
    """Every worker's heartbeat: the API's list."""
    return WorkerHeartbeat.objects.all()


def role_groups(*, names) -> QuerySet[Group]:
    """The groups of these roles, by name: the roles an operator may give in the admin."""
    return Group.objects.filter(name__in=names).order_by("name")


def user_groups_outside(*, user, offered) -> list[Group]:
    """The user's groups not among those offered (an operator's form leaves them as they were)."""
    return list(user.groups.exclude(pk__in=offered))
