"""Worker heartbeats: how /healthz knows when a Celery worker last answered."""

from django.db import models


class WorkerHeartbeat(models.Model):
    hostname = models.CharField(max_length=255, unique=True)
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(help_text="Written every few seconds by the running worker.")
    last_task_at = models.DateTimeField(
        null=True, blank=True, help_text="When this worker last ran the heartbeat task from the broker."
    )

    class Meta:
        ordering = ["-last_seen"]

    def __str__(self) -> str:
        return self.hostname
