"""Models of the judging runs that workers carry out and of the OpenAI Batch API batches they send.

A judging run re-judges an audit under another rubric version, scores a validation set or adds a judge.

A run's progress lives in its row (turns judged of the total), and so does the claim of the worker
that holds it (a lease), so a sweep can hand a run whose worker died to another. A batch row records
every step taken at the provider (uploaded file, batch id, output and error files) before the next one,
so a successor polls the batch a killed worker created instead of paying for another. A finished run
states what it judged (done, done with failures, failed) and the cause in the provider's words.
"""

from django.db import models

from .leased_job import LeasedJob
from .llm import ModelEndpoint


class JudgeRun(LeasedJob):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        DONE_WITH_FAILURES = "done_with_failures", "Done with failures"
        FAILED = "failed", "Failed"

    owner = models.CharField(
        max_length=120, db_index=True, help_text='What the run judges for, e.g. "judge_validation:12".'
    )
    description = models.CharField(max_length=300, blank=True)
    endpoint = models.ForeignKey(ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="judge_runs")
    via_batch = models.BooleanField(default=False, help_text="Judged through the Batch API (at the batch price).")
    task_name = models.CharField(max_length=100, help_text="The Celery task that carries the run out.")
    task_args = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED, db_index=True)
    total = models.PositiveIntegerField(default=0, help_text="Turns to judge.")
    judged = models.PositiveIntegerField(default=0, help_text="Turns with a judgement (scored, unparsable or failed).")
    scored = models.PositiveIntegerField(default=0, help_text="Turns the judge scored (a usable judgement).")
    calls_sent = models.PositiveIntegerField(default=0, help_text="Calls that reached the provider.")
    calls_cached = models.PositiveIntegerField(default=0)
    error = models.TextField(
        blank=True, help_text="The cause: why turns were left unscored or the run failed, in the provider's words."
    )
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"judge run {self.pk} for {self.owner} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.DONE_WITH_FAILURES)


class JudgeBatch(models.Model):
    """One batch at the provider: the requests of one judging round of a run."""

    class Status(models.TextChoices):
        PREPARING = "preparing", "Preparing (not yet at the provider)"
        VALIDATING = "validating", "Validating"
        IN_PROGRESS = "in_progress", "In progress"
        FINALIZING = "finalizing", "Finalizing"
        CANCELLING = "cancelling", "Cancelling"
        COMPLETED = "completed", "Completed (not yet collected)"
        FAILED = "failed", "Failed at the provider"
        EXPIRED = "expired", "Expired (finished lines kept)"
        CANCELLED = "cancelled", "Cancelled"
        COLLECTED = "collected", "Collected into the ledger"

    run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="batches")
    endpoint = models.ForeignKey(ModelEndpoint, null=True, on_delete=models.SET_NULL, related_name="judge_batches")
    round = models.PositiveSmallIntegerField(default=0, help_text="0: first asks; later rounds re-ask.")
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the sorted request keys it holds.")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PREPARING)
    requests = models.JSONField(default=dict, help_text="Ledger key -> the request as the ledger stores it.")
    lines = models.PositiveIntegerField(default=0)
    input_file_id = models.CharField(max_length=200, blank=True)
    provider_batch_id = models.CharField(max_length=200, blank=True)
    output_file_id = models.CharField(max_length=200, blank=True)
    error_file_id = models.CharField(max_length=200, blank=True)
    request_counts = models.JSONField(default=dict, blank=True, help_text="The provider's total/completed/failed.")
    answered = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    unreadable = models.PositiveIntegerField(default=0, help_text="Output lines that named no request.")
    unrun = models.PositiveIntegerField(
        default=0, help_text="Lines the provider never ran (the batch expired, was cancelled or was rejected)."
    )
    final_status = models.CharField(
        max_length=12,
        blank=True,
        help_text="How the batch ended at the provider: completed, failed, expired, cancelled.",
    )
    validation_errors = models.JSONField(
        default=list,
        blank=True,
        help_text="Why the provider rejected the batch: its errors.data {code, message, param, line}.",
    )
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)
    polled_at = models.DateTimeField(null=True, blank=True)
    collected_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["run", "content_hash"], name="judge_batch_unique_content")]

    def __str__(self) -> str:
        return f"batch {self.provider_batch_id or self.pk} ({self.status})"
