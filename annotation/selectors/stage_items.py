"""Reads behind a stage's item flow: its main items, the items closed to it, and those its training may not draw.

Which items its rule makes main work (`workflow.item_rules` decides from what is read here), which items are closed to
it because they train or test annotators, and which items its pilot and qualification test may not draw because another
stage asking the same question already uses them."""

from __future__ import annotations

from annotation.models import (
    Adjudication,
    Assignment,
    CrossStageConflict,
    Item,
    Phase,
    Stage,
    StageLabelling,
    TrainingItem,
    WorkedExample,
)
from annotation.workflow import item_rules


def stage_item_rule(settings: StageLabelling) -> item_rules.ItemRule:
    """The stored rule as plain data."""
    return item_rules.ItemRule(
        rule=settings.item_rule or item_rules.ALL,
        source_stage=settings.source_stage_id,
        source_values=tuple(str(v) for v in settings.source_values or ()),
        item_ids=tuple(settings.item_ids or ()),
    )


def stages_sharing_a_question(stage: Stage) -> set[int]:
    """The stage and every stage of its project that asks one of its questions."""
    sharing = set(
        Stage.objects.filter(project_id=stage.project_id, questions__stages=stage).values_list("id", flat=True)
    )
    return sharing | {stage.pk}


def training_item_ids(stage_ids) -> set[int]:
    """Pilot and qualification items and worked examples of the given stages."""
    ids = set(TrainingItem.objects.filter(stage_id__in=stage_ids).values_list("item_id", flat=True))
    return ids | set(WorkedExample.objects.filter(stage_id__in=stage_ids).values_list("item_id", flat=True))


def removed_before(stage: Stage) -> set[int]:
    """Items a researcher removed for a conflict found at a stage before this one."""
    return set(
        CrossStageConflict.objects.filter(
            project_id=stage.project_id,
            disposition=CrossStageConflict.Disposition.REMOVED,
            later_stage__order__lt=stage.order,
        ).values_list("item_id", flat=True)
    )


def main_items_wanted(stage: Stage, settings: StageLabelling) -> list[int]:
    """The stage's main items by its rule, in hand-out order."""
    rule = stage_item_rule(settings)
    settled = None
    if rule.rule == item_rules.SETTLED:
        settled = dict(
            Adjudication.objects.filter(
                stage_id=settings.source_stage_id, question_id=settings.source_question_id
            ).values_list("item_id", "final_value")
        )
    project_items = Item.objects.filter(project_id=stage.project_id).order_by("id").values_list("id", flat=True)
    return item_rules.wanted_main_items(
        rule,
        project_items=list(project_items),
        settled=settled,
        training=training_item_ids(stages_sharing_a_question(stage)),
        removed=removed_before(stage),
    )


def training_closures(stage: Stage) -> list[tuple[str, set[int]]]:
    """Why items are closed to the stage's pilot and qualification test, reason by reason (an item may
    appear under more than one): the training items and worked examples of each other stage that asks one
    of its questions (their gold would reach annotators twice, once as that stage's feedback), and items
    already handed out as main work in this stage or a stage sharing a question with it. A stage asking
    other questions shares its training items freely: its gold answers none of this stage's questions."""
    sharing = stages_sharing_a_question(stage)
    closures = []
    for other in Stage.objects.filter(pk__in=sharing).exclude(pk=stage.pk).order_by("order"):
        reason = (
            f"pilot or test items or worked examples of stage {other.order} ({other.name}), "
            "which asks the same question"
        )
        closures.append((reason, training_item_ids([other.pk])))
    main = set(Assignment.objects.filter(stage_id__in=sharing, phase=Phase.MAIN).values_list("item_id", flat=True))
    closures.append(("already handed out as main work in this stage or one asking the same question", main))
    return closures


def closed_to_training(stage: Stage) -> set[int]:
    """Items the stage's pilot and qualification test may not draw (`training_closures`)."""
    closed: set[int] = set()
    for _, item_ids in training_closures(stage):
        closed |= item_ids
    return closed
