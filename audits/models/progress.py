"""An audit's running totals, kept as its rows are written, so its live panel reads a few rows, never its ledger.

`AuditCallTally`: per (audit, endpoint), what the model calls the audit paid for add up to (each ledger row adds a
call, its status, its attempts, its billed tokens), kept by `audits.services.progress_tally`. `AuditTally`: the
audit's dialogues by status and its judged turns by verdict, kept by database triggers (migration 0016), so every
write counts, whatever makes it. Each equals a recount from the rows.
"""

from django.db import models

from .runs import Audit


class AuditCallTally(models.Model):
    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="call_tallies")
    endpoint_ref = models.PositiveIntegerField(
        default=0, help_text="The endpoint's id (0: none), kept when the endpoint is deleted."
    )
    calls = models.BigIntegerField(default=0)
    ok = models.BigIntegerField(default=0)
    unparsable = models.BigIntegerField(default=0)
    attempts = models.BigIntegerField(default=0)
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    reasoning_tokens = models.BigIntegerField(default=0)
    billed_prompt = models.FloatField(default=0.0, help_text="Prompt tokens times each call's price factor.")
    billed_completion = models.FloatField(default=0.0, help_text="Completion tokens times each call's price factor.")

    class Meta:
        ordering = ["audit", "endpoint_ref"]
        constraints = [models.UniqueConstraint(fields=["audit", "endpoint_ref"], name="call_tally_unique")]


class AuditTally(models.Model):
    """The audit's dialogues by status (and the calls they were served without sending), and its tutor turns by
    the judge's verdict: kept by the database on every write to a dialogue or a turn (triggers, migration 0016)."""

    audit = models.OneToOneField(Audit, on_delete=models.CASCADE, related_name="tally")
    pending = models.BigIntegerField(default=0)
    running = models.BigIntegerField(default=0)
    done = models.BigIntegerField(default=0)
    failed = models.BigIntegerField(default=0)
    cancelled = models.BigIntegerField(default=0)
    calls_cached = models.BigIntegerField(default=0, help_text="The dialogues' calls answered without sending.")
    turns_ok = models.BigIntegerField(default=0)
    turns_unparsable = models.BigIntegerField(default=0)
    turns_failed = models.BigIntegerField(default=0)
