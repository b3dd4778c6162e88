"""Reads of a stage's crowd outcomes: one row per participant, for the researcher who approves, rejects or pays them.

Each row has the raw platform ids (researchers only), the status (`annotation.workflow.crowd_status`), when the
participant started and finished, the time spent, the main items they labelled, the code they were shown and what the
link states a completed recruit is paid (empty for any other outcome, or when the link states no pay)."""

from __future__ import annotations

from django.db.models import Count

from annotation.models import Assignment, CrowdRecruit, Enrollment, Phase, Stage
from annotation.workflow.crowd_status import COMPLETED, WORKING, crowd_status

OUTCOME_COLUMNS = (
    "pseudonym",
    "participant_id",
    "study_id",
    "session_id",
    "status",
    "started_at",
    "finished_at",
    "seconds_spent",
    "main_items_labelled",
    "code",
    "pay",
    "pay_currency",
)


def crowd_outcome_rows(stage: Stage) -> list[dict]:
    """The stage's recruits in arrival order. `code` is the one shown, or the one their outcome will show (empty while
    working); `seconds_spent` runs from the first arrival to the finish, or to the latest visit while working."""
    recruits = list(
        CrowdRecruit.objects.filter(link__stage=stage).select_related("user", "link").order_by("created_at", "id")
    )
    labelled = dict(
        Assignment.objects.filter(stage=stage, annotator__crowd_recruit__link__stage=stage, labels__phase=Phase.MAIN)
        .values("annotator_id")
        .annotate(n=Count("id", distinct=True))
        .values_list("annotator_id", "n")
    )
    failed = set(
        Enrollment.objects.filter(
            stage=stage, status=Enrollment.Status.FAILED, user__crowd_recruit__link__stage=stage
        ).values_list("user_id", flat=True)
    )
    rows = []
    for recruit in recruits:
        count = labelled.get(recruit.user_id, 0)
        status = crowd_status(
            recorded=recruit.outcome,
            released=recruit.release_reason if recruit.released_at else "",
            gate_failed=recruit.user_id in failed,
            main_items_labelled=count,
            quota=recruit.link.items_per_recruit,
        )
        end = recruit.finished_at or recruit.last_seen_at
        rows.append(
            {
                "pseudonym": recruit.user.username,
                "participant_id": recruit.participant_id,
                "study_id": recruit.study_id,
                "session_id": recruit.session_id,
                "status": status,
                "started_at": recruit.created_at,
                "finished_at": recruit.finished_at,
                "seconds_spent": max(0, round((end - recruit.created_at).total_seconds())),
                "main_items_labelled": count,
                "code": recruit.code or ("" if status == WORKING else recruit.link.code_for(status)),
                **_pay(recruit.link, status),
            }
        )
    return rows


def _pay(link, status: str) -> dict[str, str]:
    """What the platform should pay: the link's stated pay for a completed recruit, as text with two decimals."""
    if status != COMPLETED or link.pay_amount is None:
        return {"pay": "", "pay_currency": ""}
    return {"pay": f"{link.pay_amount:.2f}", "pay_currency": link.pay_currency}
