"""Cross-stage conflicts in the database: find items settled positive at one stage and negative at a
later one (the pure rule is `conflict_rules.find_conflicts`), store each once, and record the
researcher's disposition — removed, or retained with a "cross-category" flag.

Which answer stands for a stage: its first question (by position) that names positive values; a stage
without such a question is not compared. Only settled answers (an `Adjudication`) are compared.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotation.models import Adjudication, AnnotationProject, CrossStageConflict, LabelQuestion, Stage
from annotation.workflow import conflict_rules

DISPOSITION_OF_RULE = {
    conflict_rules.REMOVED: CrossStageConflict.Disposition.REMOVED,
    conflict_rules.RETAINED_WITH_FLAG: CrossStageConflict.Disposition.RETAINED,
}
RULE_OF_DISPOSITION = {
    CrossStageConflict.Disposition.REMOVED: conflict_rules.REMOVED,
    CrossStageConflict.Disposition.RETAINED: conflict_rules.RETAINED_WITH_FLAG,
    CrossStageConflict.Disposition.PENDING: None,
}


class ConflictRefused(ValueError):
    pass


def stage_polarity_question(stage: Stage) -> LabelQuestion | None:
    """The question whose settled answer says whether the item passed this stage."""
    for question in stage.questions.order_by("position", "id"):
        if question.positive_values:
            return question
    return None


def conflicts_detect(*, project: AnnotationProject) -> list[CrossStageConflict]:
    """Store a conflict for every item positive at an earlier stage and negative at a later one.
    Idempotent: an existing conflict (and its disposition) is kept."""
    stages = list(project.stages.order_by("order"))
    polarity = {stage.id: stage_polarity_question(stage) for stage in stages}
    compared = [stage for stage in stages if polarity[stage.id] is not None]
    positive = {stage.id: set(polarity[stage.id].positive_values) for stage in compared}
    final_values = {
        (item_id, stage_id): value
        for item_id, stage_id, value in Adjudication.objects.filter(
            stage__in=compared, question_id__in=[polarity[s.id].id for s in compared]
        )
        .order_by("item_id", "stage__order")
        .values_list("item_id", "stage_id", "final_value")
    }
    found = conflict_rules.find_conflicts(final_values, positive, stage_order=[stage.id for stage in compared])
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
    CrossStageConflict.objects.filter(pk=conflict.pk).update(
        disposition=disposition, decided_by=by, note=note.strip(), decided_at=timezone.now()
    )
    conflict.refresh_from_db()
    return conflict


def disposition_counts(project: AnnotationProject, *, n_items: int | None = None) -> conflict_rules.DispositionCounts:
    dispositions = project.conflicts.values_list("disposition", flat=True)
    return conflict_rules.count_dispositions([RULE_OF_DISPOSITION[d] for d in dispositions], n_items=n_items)


def removed_item_ids(project: AnnotationProject) -> set[int]:
    return set(
        project.conflicts.filter(disposition=CrossStageConflict.Disposition.REMOVED).values_list("item_id", flat=True)
    )


def flagged_item_ids(project: AnnotationProject) -> set[int]:
    return set(
        project.conflicts.filter(disposition=CrossStageConflict.Disposition.RETAINED).values_list("item_id", flat=True)
    )
