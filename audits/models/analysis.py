"""Model of an audit's fairness analysis: the worker's job and the cache of its result, in one row.

There is one row per (audit, analysis parameters): both the job that computes the analysis on a Celery worker (its state
and progress) and the cache of its result, valid while the audit's scores are unchanged.

A row is keyed by a hash of the parameters and carries a fingerprint of the scores it is (being) computed
from (counts, largest ids and value sums of the finished dialogues and judge scores). Its status moves
queued → running → done | failed; a worker claims a row by compare-and-swap on (status, lease), writes
`cells_done` / `cells_total` as it goes and renews its lease with each write, so a row whose worker died is
claimed again once the lease has run out. When the fingerprint of the audit's current scores differs from
a done row's, the analysis is queued again on the same row.
"""

from django.db import models

from .leased_job import LeasedJob
from .runs import Audit


class AnalysisResult(LeasedJob):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="analysis_results")
    parameters_hash = models.CharField(max_length=64)
    parameters = models.JSONField(help_text="audits.fairness.AnalysisParameters as a dict.")
    scores_fingerprint = models.CharField(
        max_length=64, help_text="Of the scores the result was (or is being) computed from."
    )
    result = models.JSONField(
        default=dict, blank=True, help_text="Rows of the judge-scored and conversation-level contrast tables (done)."
    )
    n_scores = models.PositiveIntegerField(default=0, help_text="Dialogue scores analysed.")
    seconds = models.FloatField(default=0.0, help_text="Time the analysis took.")
    computed_at = models.DateTimeField(auto_now=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    cells_done = models.PositiveIntegerField(default=0, help_text="Contrast × metric cells computed so far.")
    cells_total = models.PositiveIntegerField(default=0, help_text="0 until the computation knows its size.")
    error = models.TextField(blank=True, help_text="Why the last computation failed.")
    queued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-computed_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["audit", "parameters_hash"], name="analysis_result_unique_parameters")
        ]

    def __str__(self) -> str:
        return f"analysis of audit {self.audit_id} ({self.parameters_hash[:8]}, {self.status})"
