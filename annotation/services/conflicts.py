"""Writes for cross-stage conflicts: storing each conflict once and recording its disposition.

A conflict is an item settled positive at one stage and negative at a later one, stored once (the pure rule is
`conflict_rules.find_conflicts`, the settled answers compared are read by `selectors.conflicts`), and the researcher's
disposition is removed, or retained with a "cross-category" flag.

A removal takes the item out of every later stage: a disposition brings the project's open stages up to
their item rules at once (`services.assignment.project_main_items_sync`), so a removed item leaves a later
stage's list before anyone is handed it, and an item retained after all comes back.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.models import AnnotationProject, CrossStageConflict
from annotation.selectors.conflicts import compared_stage_values
from annotation.services.assignment import project_main_items_sync
from annotation.workflow import conflict_rules


class ConflictRefused(ValueError):
    pass


def conflicts_detect(*, project: AnnotationProject) -> list[CrossStageConflict]:
    """Store a conflict for every item positive at an earlier stage and negative at a later one.
    Idempotent: an existing conflict (and its disposition) is kept."""
    polarity, positive, order, final_values = compared_stage_values(project)
    found = conflict_rules.find_conflicts(final_values, positive, stage_order=order)
    stored = []
    with transaction.atomic():
        for conflict in found:
            row, _ = CrossStageConflict.objects.get_or_create(
                item_id=conflict.item_id,
                earlier_stage_id=conflict.positive_stage,
                later_stage_id=conflict.negative_stage,
                defaults={
                    "project": project,
                    "detail": {
                        "earlier_value": conflict.positive_value,
                        "later_value": conflict.negative_value,
                        "earlier_question": polarity[conflict.positive_stage].key,
                        "later_question": polarity[conflict.negative_stage].key,
                    },
                },
            )
            stored.append(row)
    return stored


def conflict_dispose(*, conflict: CrossStageConflict, disposition: str, by, note: str = "") -> CrossStageConflict:
    """Record "removed" or "retained" (with the cross-category flag); a later call may change its mind."""
    if disposition not in (CrossStageConflict.Disposition.REMOVED, CrossStageConflict.Disposition.RETAINED):
        raise ConflictRefused("The disposition is 'removed' or 'retained'.")
    with transaction.atomic():
        CrossStageConflict.objects.filter(pk=conflict.pk).update(
            disposition=disposition, decided_by=by, note=note.strip(), decided_at=timezone.now()
        )
        project_main_items_sync(conflict.project_id)
    conflict.refresh_from_db()
    return conflict
