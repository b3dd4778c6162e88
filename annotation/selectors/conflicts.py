"""Reads for cross-stage conflicts: the settled answers compared, the dispositions and the conflict rate.

They also say which question's settled answer says whether an item passed a stage, and which items were removed.

Which answer stands for a stage: its first question (by position) that names positive values; a stage
without such a question is not compared. Only settled answers (an `Adjudication`) are compared, and the
conflict rate is taken over the items settled at two or more compared stages (`disposition_counts`).
"""

from __future__ import annotations

from django.db.models import Q

from annotation.models import Adjudication, AnnotationProject, CrossStageConflict, LabelQuestion, Stage
from annotation.workflow import conflict_rules

RULE_OF_DISPOSITION = {
    CrossStageConflict.Disposition.REMOVED: conflict_rules.REMOVED,
    CrossStageConflict.Disposition.RETAINED: conflict_rules.RETAINED_WITH_FLAG,
    CrossStageConflict.Disposition.PENDING: None,
}


def stage_polarity_question(stage: Stage) -> LabelQuestion | None:
    """The question whose settled answer says whether the item passed this stage."""
    for question in stage.questions.order_by("position", "id"):
        if question.positive_values:
            return question
    return None


def compared_stage_values(project: AnnotationProject):
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


def disposition_counts(project: AnnotationProject) -> conflict_rules.DispositionCounts:
    """The dispositions, and the rate over the items settled at two or more compared stages."""
    _, _, order, final_values = compared_stage_values(project)
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


def project_conflicts(project: AnnotationProject):
    """The project's cross-stage conflicts by item, with the item, both stages and who decided (page and API)."""
    return project.conflicts.select_related("item", "earlier_stage", "later_stage", "decided_by").order_by(
        "item_id", "id"
    )
