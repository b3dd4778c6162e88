"""Celery tasks of accounts: the heartbeat task proves the broker → worker → database path."""

import socket

from celery import shared_task

from .services import worker_heartbeat_record


@shared_task(bind=True, name="accounts.worker_heartbeat")
def worker_heartbeat(self) -> str:
    hostname = self.request.hostname or socket.gethostname()
    worker_heartbeat_record(hostname=hostname, from_task=True)
    return hostname
