"""The cache of fairness analyses: one row per (audit, analysis parameters), valid while the audit's
scores are unchanged.

A row is keyed by a hash of the parameters and carries a fingerprint of the scores it was computed
from (counts, largest ids and value sums of the finished dialogues and judge scores); when the
fingerprint of the audit's current scores differs, the analysis is recomputed and the row replaced.
"""

from django.db import models

from .runs import Audit


class AnalysisResult(models.Model):
    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="analysis_results")
    parameters_hash = models.CharField(max_length=64)
    parameters = models.JSONField(help_text="audits.fairness.AnalysisParameters as a dict.")
    scores_fingerprint = models.CharField(max_length=64, help_text="Of the scores the result was computed from.")
    result = models.JSONField(help_text="Rows of the judge-scored and conversation-level contrast tables.")
    n_scores = models.PositiveIntegerField(default=0, help_text="Dialogue scores analysed.")
    seconds = models.FloatField(default=0.0, help_text="Time the analysis took.")
    computed_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-computed_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["audit", "parameters_hash"], name="analysis_result_unique_parameters")
        ]

    def __str__(self) -> str:
        return f"analysis of audit {self.audit_id} ({self.parameters_hash[:8]})"
