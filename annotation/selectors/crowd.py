"""Reads of crowd recruits: the stage's recruits by pseudonym, and the researcher-only rows with raw platform ids."""

from __future__ import annotations

from annotation.models import CrowdLink, CrowdRecruit, CrowdVisit, Stage


def crowd_link_of(stage: Stage) -> CrowdLink | None:
    return CrowdLink.objects.filter(stage=stage).first()


def crowd_recruits(stage: Stage) -> list[CrowdRecruit]:
    """The stage's recruits, by pseudonym (no platform id)."""
    return list(CrowdRecruit.objects.filter(link__stage=stage).select_related("user").order_by("created_at", "id"))


def crowd_export_rows(stage: Stage) -> list[dict]:
    """Every visit with its raw platform ids, for the researcher who must pay or message participants."""
    visits = CrowdVisit.objects.filter(recruit__link__stage=stage).select_related("recruit__user")
    return [
        {
            "pseudonym": visit.recruit.user.username,
            "participant_id": visit.participant_id,
            "study_id": visit.study_id,
            "session_id": visit.session_id,
            "visited_at": visit.at.isoformat(),
            "outcome": visit.recruit.outcome,
        }
        for visit in visits.order_by("recruit__created_at", "recruit_id", "at", "id")
    ]


def session_recruit_of(recruit_id: int, user) -> CrowdRecruit | None:
    """The crowd recruit ``recruit_id`` when it is still ``user``'s, with its link."""
    return CrowdRecruit.objects.select_related("link", "user").filter(pk=recruit_id, user=user).first()


def is_users_recruit(*, link: CrowdLink, participant_hash: str, user) -> bool:
    """Whether ``user`` is the recruit of the participant (by their hashed platform id) on ``link``."""
    return CrowdRecruit.objects.filter(link=link, participant_hash=participant_hash, user=user).exists()
