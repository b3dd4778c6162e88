"""Models of the endpoints' shared rate-limit state: token buckets and per-process in-flight limits.

The token buckets are the ones worker processes share when the broker is not Redis (`audits.services.rate_limits` keeps
them in Redis otherwise), and the in-flight limit is the one each worker process has reached per endpoint, for the audit
page."""

from django.db import models

from .llm import ModelEndpoint


class RateBucket(models.Model):
    """One token bucket (`audits.llm.limits.bucket_reserve`): its level and when it was last changed."""

    key = models.CharField(max_length=200, primary_key=True, help_text='e.g. "endpoint:12:rpm".')
    tokens = models.FloatField()
    stamp = models.FloatField(help_text="Unix time of the last reservation.")

    def __str__(self) -> str:
        return f"{self.key}: {self.tokens:.2f}"


class EndpointLimitStatus(models.Model):
    """What one worker process's limiter of an endpoint last reported (audits.llm.limits snapshot)."""

    endpoint = models.ForeignKey(ModelEndpoint, on_delete=models.CASCADE, related_name="limit_statuses")
    worker = models.CharField(max_length=200, help_text="host:pid of the worker process.")
    limit = models.PositiveIntegerField(help_text="Requests it lets in flight now (AIMD).")
    ceiling = models.PositiveIntegerField(help_text="The endpoint's max_concurrency.")
    in_flight = models.PositiveIntegerField(default=0)
    waiting = models.PositiveIntegerField(default=0)
    rate_limited = models.PositiveIntegerField(default=0, help_text="429 answers since the process started.")
    decreases = models.PositiveIntegerField(default=0, help_text="Times the limit was halved.")
    waited_seconds = models.FloatField(default=0, help_text="Seconds requests waited for the rate budgets.")
    updated_at = models.DateTimeField()

    class Meta:
        ordering = ["endpoint", "worker"]
        constraints = [models.UniqueConstraint(fields=["endpoint", "worker"], name="limit_status_one_per_worker")]

    def __str__(self) -> str:
        return f"{self.endpoint_id}@{self.worker}: {self.limit}/{self.ceiling}"
