"""Cross-stage conflicts in the database: find items settled positive at one stage and negative at a
later one (the pure rule is `conflict_rules.find_conflicts`), store each once, and record the
researcher's disposition — removed, or retained with a "cross-category" flag.

Which answer stands for a stage: its first question (by position) that names positive values; a stage
without such a question is not compared. Only settled answers (an `Adjudication`) are compared, and the
conflict rate is taken over the items settled at two or more compared stages (`disposition_counts`).

A removal takes the item out of every later stage: a disposition brings the project's open stages up to
their item rules at once (`assignment.project_main_items_sync`), so a removed item leaves a later stage's
list before anyone is handed it, and an item retained after all comes back.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from annotation.models import Adjudication, AnnotationProject, CrossStageConflict, LabelQuestion, Stage
from annotation.services.assignment import project_main_items_sync
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


def _compared_values(project: AnnotationProject):
    """The compared stages' polarity questions and settled answers: (polarity by stage id, positive values by
    stage id, stage ids in order, {(item id, stage id): final value})."""
    stages = list(project.stages.order_by("order"))
    polarity = {stage.id: stage_polarity_question(stage) for stage in stages}
    compared = [stage for stage in stages if polarity[stage.id] is not None]
    positive = {stage.id: set(polarity[stage.id].positive_values) for stage in compared}
    # Each stage's own polarity question only (a stage may also ask another stage's question).
    pairs = Q(pk__in=[])
    for stage in compared:
        pairs |= Q(stage_id=stage.id, question_id=polarity[stage.id].id)
    final_values = {
        (item_id, stage_id): value
        for item_id, stage_id, value in Adjudication.objects.filter(pairs)
        .order_by("item_id", "stage__order")
        .values_list("item_id", "stage_id", "final_value")
    }
    return polarity, positive, [stage.id for stage in compared], final_values


def conflicts_detect(*, project: AnnotationProject) -> list[CrossStageConflict]:
    """Store a conflict for every item positive at an earlier stage and negative at a later one.
    Idempotent: an existing conflict (and its disposition) is kept."""
    polarity, positive, order, final_values = _compared_values(project)
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


def disposition_counts(project: AnnotationProject) -> conflict_rules.DispositionCounts:
    """The dispositions, and the rate over the items settled at two or more compared stages."""
    _, _, order, final_values = _compared_values(project)
    dispositions = project.conflicts.values_list("disposition", flat=True)
    return conflict_rules.count_dispositions(
        [RULE_OF_DISPOSITION[d] for d in dispositions],
        n_items=conflict_rules.items_compared(final_values) or None,
        n_items_basis=f"settled at {'both' if len(order) == 2 else 'two or more'} compared stages",
    )


def removed_item_ids(project: AnnotationProject) -> set[int]:
    return set(
        project.conflicts.filter(disposition=CrossStageConflict.Disposition.REMOVED).values_list("item_id", flat=True)
    )
