"""Reads of possible duplicate recruits: a link's recruits tied together by their visits' browser and address marks.

The rule is `workflow.crowd_duplicates`; the researcher's list and the main-item hand-out both read it here."""

from __future__ import annotations

from annotation.models import CrowdRecruit, CrowdVisit, Stage
from annotation.selectors.crowd import crowd_link_of, crowd_recruits
from annotation.workflow.crowd_duplicates import duplicate_groups


def link_duplicates(link_id: int) -> dict[int, frozenset[int]]:
    """Recruit id -> the ids of the link's other recruits flagged as the same person."""
    marks = CrowdVisit.objects.filter(recruit__link_id=link_id).values_list(
        "recruit_id", "browser_hash", "address_hash"
    )
    return duplicate_groups(marks.distinct())


def same_person_annotators(*, stage_id: int, annotator_id: int) -> list[int]:
    """The user ids of the crowd recruits of the stage's link flagged as the same person as ``annotator_id``
    (empty for anyone who did not arrive through the link): the hand-out never gives them slots of one item."""
    recruit = CrowdRecruit.objects.filter(user_id=annotator_id, link__stage_id=stage_id).values("pk", "link_id").first()
    if recruit is None:
        return []
    others = link_duplicates(recruit["link_id"]).get(recruit["pk"], frozenset())
    if not others:
        return []
    return sorted(CrowdRecruit.objects.filter(pk__in=others).values_list("user_id", flat=True))


def possible_duplicate_pseudonyms(link_id: int) -> dict[int, list[str]]:
    """Recruit id -> the pseudonyms of the recruits flagged as the same person (only recruits that have some)."""
    groups = {recruit: others for recruit, others in link_duplicates(link_id).items() if others}
    if not groups:
        return {}
    names = dict(CrowdRecruit.objects.filter(link_id=link_id).values_list("pk", "user__username"))
    return {recruit: sorted(names[other] for other in others) for recruit, others in groups.items()}


def recruits_with_duplicates(stage: Stage) -> list[CrowdRecruit]:
    """The stage's recruits (`selectors.crowd.crowd_recruits`), each with ``possible_duplicate_of``: the pseudonyms
    of the recruits flagged as the same person."""
    recruits = crowd_recruits(stage)
    link = crowd_link_of(stage)
    duplicates = possible_duplicate_pseudonyms(link.pk) if link is not None else {}
    for recruit in recruits:
        recruit.possible_duplicate_of = duplicates.get(recruit.pk, [])
    return recruits
