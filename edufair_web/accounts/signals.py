"""A running Celery worker writes its heartbeat row every few seconds, from a daemon thread.

The broker-independent way to see workers: kombu's SQLAlchemy transport has no broadcast, so
`celery inspect ping` is not available on the embedded default, but the database always is.
"""

import logging
import threading

from celery.signals import worker_ready, worker_shutdown
from django.conf import settings

log = logging.getLogger(__name__)
_stop = threading.Event()


@worker_ready.connect
def start_heartbeat(sender=None, **kwargs) -> None:
    hostname = getattr(sender, "hostname", None) or "worker"
    _stop.clear()
    thread = threading.Thread(target=_beat, args=(hostname,), name="edufair-heartbeat", daemon=True)
    thread.start()


@worker_shutdown.connect
def stop_heartbeat(**kwargs) -> None:
    _stop.set()


def _beat(hostname: str) -> None:
    from django.db import close_old_connections

    from .services import worker_heartbeat_record

    while True:
        try:
            close_old_connections()
            worker_heartbeat_record(hostname=hostname)
        except Exception:  # the database may be restarting; the next beat tries again
            log.exception("worker heartbeat could not be written")
        if _stop.wait(settings.WORKER_HEARTBEAT_SECONDS):
            return
