"""Reads of the run pages and the runs API: audits newest first, an audit's parts, its dialogues and a transcript's."""

from __future__ import annotations

from django.db.models import QuerySet

from audits.models import Audit, Condition, Dialogue, ModelEndpoint
from audits.selectors.runs import audit_list


def audits_newest_first() -> QuerySet[Audit]:
    """Every audit, newest first, with its done and failed counts (`audit_list`), conditions and tutors: the
    dashboard's and the API's list."""
    return audit_list().prefetch_related("conditions", "tutors").order_by("-created_at", "-id")


def dashboard_audits(*, limit: int) -> list[Audit]:
    """The newest `limit` audits, each with `tutor_names` (its tutors' names)."""
    audits = list(audits_newest_first()[:limit])
    for audit in audits:
        audit.tutor_names = [tutor.name for tutor in audit.tutors.all()]
    return audits


def audit_conditions(*, audit: Audit) -> QuerySet[Condition]:
    return audit.conditions.all()


def audit_tutors(*, audit: Audit) -> QuerySet[ModelEndpoint]:
    return audit.tutors.all()


def audit_question_count(*, audit: Audit) -> int:
    return audit.questions.count()


def audit_dialogue_count(*, audit: Audit) -> int:
    return audit.dialogues.count()


def dialogues_listed(
    *, audit_id: int | None = None, status: str | None = None, with_transcript: bool = False
) -> QuerySet[Dialogue]:
    """Dialogues in order, of one audit and in one state when given: the run page's table and the API's list;
    `with_transcript` brings each one's turns with their scores and its calls (the API's detail)."""
    dialogues = Dialogue.objects.select_related("tutor", "question", "condition").order_by("pk")
    if audit_id is not None:
        dialogues = dialogues.filter(audit_id=audit_id)
    if status:
        dialogues = dialogues.filter(status=status)
    if with_transcript:
        dialogues = dialogues.prefetch_related("turns__scores", "calls")
    return dialogues


def dialogues_for_transcript() -> QuerySet[Dialogue]:
    """Dialogues with what the transcript viewer names: the audit, tutor, question and condition."""
    return Dialogue.objects.select_related("audit", "tutor", "question", "condition")
