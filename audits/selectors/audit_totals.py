"""What an audit's running totals say at this moment, as one string: the key of what is cached until they move."""

from __future__ import annotations

from django.db.models import Sum

from audits.models import Audit, AuditCallTally, AuditTally

TALLY_FIELDS = (
    "pending", "running", "done", "failed", "cancelled", "calls_cached", "turns_ok", "turns_unparsable",
    "turns_failed",
)  # fmt: skip


def audit_totals_version(audit: Audit) -> str:
    """Changes whenever a call is paid for or reused, a dialogue changes state or a turn is judged (the tallies of
    `audits.models.progress`); the creation time tells this audit from another that took its id in another
    database sharing the cache."""
    paid = AuditCallTally.objects.filter(audit=audit).aggregate(calls=Sum("calls"), attempts=Sum("attempts"))
    tally = AuditTally.objects.filter(audit=audit).values_list(*TALLY_FIELDS).first()
    parts = [audit.created_at.isoformat(), paid["calls"] or 0, paid["attempts"] or 0, *(tally or ())]
    return "-".join(map(str, parts))
