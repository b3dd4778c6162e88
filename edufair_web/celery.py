"""The Celery app. The database is the source of truth; the broker only wakes workers.

Tasks are idempotent and acknowledged late, so a worker killed mid-task leaves its message
to be redelivered and the next worker finds the work either done (rows exist) or not.
"""

import os

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")

app = Celery("edufair_web", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class SweepAfterReconnect(bootsteps.StartStopStep):
    """When the worker's consumer reconnects to the broker, sweep the running audits.

    A broker restarted without persistence (Redis with `--save ""`) has lost every queued batch; only the
    database still knows the work, and a worker that stayed up would otherwise wait for messages that will
    never come. The first connection is left to the `worker_ready` sweep in audits/tasks.py; a sweep sent
    while messages were not lost only duplicates batches, which their compare-and-swap claims skip.
    """

    requires = {"celery.worker.consumer.tasks:Tasks"}

    def __init__(self, parent, **kwargs):
        super().__init__(parent, **kwargs)
        self.connected_before = False

    def start(self, parent):
        if self.connected_before:
            from audits.tasks import _sweep_on_worker_start

            _sweep_on_worker_start()
        self.connected_before = True


app.steps["consumer"].add(SweepAfterReconnect)
