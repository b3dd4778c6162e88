"""Reads of the results pages: an audit with its judge, and the (audit, tutor) pairs the compare page offers."""

from __future__ import annotations

from django.db.models import QuerySet

from audits.models import Audit, ModelEndpoint


def audits_with_judge() -> QuerySet[Audit]:
    """Audits with their judge endpoint and judge template, which every results page names."""
    return Audit.objects.select_related("judge_endpoint", "judge_template")


def audit_tutor_pairs() -> list[tuple[Audit, ModelEndpoint]]:
    """Every (audit, tutor), newest audit first: the compare page's choices."""
    audits = Audit.objects.order_by("-created_at", "-id").prefetch_related("tutors")
    return [(audit, tutor) for audit in audits for tutor in audit.tutors.all()]


def audit_or_none(audit_id: int | None) -> Audit | None:
    return Audit.objects.filter(pk=audit_id).first() if audit_id is not None else None
