"""The Celery app. The database is the source of truth; the broker only wakes workers.

Tasks are idempotent and acknowledged late, so a worker killed mid-task leaves its message
to be redelivered and the next worker finds the work either done (rows exist) or not. What a
worker does when it starts or its broker comes back (sweep the running work) lives with the
tasks it sends, in audits/tasks.py.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "edufair_web.settings")

app = Celery("edufair_web", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
