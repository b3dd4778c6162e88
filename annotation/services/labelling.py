"""Writes for main labelling: the next item for an annotator who passed the gate, the submit of their
answers (validated like every label by `services.labels.answers_validate`) followed by the item's
resolution once it has its N labels, and a stage's assignment settings.

A submit locks the annotator's assignment and then the item's `MainItem` row, so the N-th label and the
resolution it triggers are decided by exactly one transaction, whichever annotator submits last.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from annotation.models import (
    Assignment,
    Item,
    MainItem,
    Phase,
    Stage,
    StageLabelling,
)
from annotation.services.labels import (
    MAX_SECONDS_PER_ITEM,
    Answer,
    NoAssignment,
    SubmitResult,
    answers_validate,
)
from annotation.workflow import main_queries
from annotation.workflow.assignment import main_items_sync, next_assignment
from annotation.workflow.main_queries import LabellingAccess
from annotation.workflow.resolution import item_resolve_if_complete
from annotation.workflow.training import Action, StepRefused, TrainingProgress, check_action


class ReservationExpired(NoAssignment):
    """The item's reservation expired and its slot went to someone else; the answers were not stored."""


@dataclass(frozen=True)
class LabellingProgress:
    mine: int  # items this annotator submitted in the stage
    items: int  # main items in the stage
    labels_done: int  # submitted main labels (assignments) in the stage, everyone's
    labels_needed: int  # items × overlap

    @property
    def stage_share(self) -> float:
        return self.labels_done / self.labels_needed if self.labels_needed else 0.0


def main_labelling_check(*, annotator, stage_id: int) -> LabellingAccess:
    """The stage and the annotator's standing in it, if they may label its main items now (passed, current
    guideline confirmed). Raises Stage.DoesNotExist (no such stage) or StepRefused.

    One statement (`workflow.main_queries.labelling_access`), because main labelling is the hot path; it
    also brings the stage's assignment settings and the annotator's count of submitted items. The rule is
    the training step machine's (`check_action(…, LABEL_MAIN)`), which here only needs the gate, the
    replacement and the guideline.
    """
    access = main_queries.labelling_access(stage_id=stage_id, annotator_id=annotator.pk)
    if access is None:
        raise Stage.DoesNotExist(f"No stage {stage_id}.")
    if not access.enrolled:
        raise StepRefused("You are not enrolled in this stage.")
    progress = TrainingProgress(
        current_guideline_version=access.guideline_version,
        confirmed_current_guideline=access.confirmed_current_guideline,
        examples_total=0,
        examples_seen=0,
        pilot_total=0,
        pilot_labelled=0,
        norming_done=False,
        qualification_total=0,
        qualification_labelled=0,
        gate_passed=access.gate_passed,
        replaced=access.replaced,
    )
    check_action(progress, Action.LABEL_MAIN)
    return access


def label_next(*, annotator, stage: Stage, checked: LabellingAccess | None = None) -> Assignment | None:
    """The item to label now (the same one until it is submitted), or None when nothing is left.

    ``checked``: what `main_labelling_check` returned, when the caller already made that check.
    """
    if checked is None:
        main_labelling_check(annotator=annotator, stage_id=stage.pk)
    return next_assignment(stage=stage, annotator=annotator)


def label_submit(
    *,
    annotator,
    stage: Stage,
    item: Item | int,
    answers: dict[str, Answer],
    seconds: float = 0.0,
    checked: LabellingAccess | None = None,
) -> SubmitResult:
    """Store the answers to a reserved main item (``item``: the item or its id); a repeated submit changes
    nothing (created=False). ``checked`` as for `label_next`.

    Validation is `services.labels.answers_validate`, the same as for pilot and qualification answers.
    Raises StepRefused (not passed), LabelInvalid (answers), ReservationExpired (no reservation of this
    annotator on this item, which includes an item that is not in the stage).
    """
    if checked is None:
        main_labelling_check(annotator=annotator, stage_id=stage.pk)
    question_ids = {q.key: q.pk for q in main_queries.stage_questions(stage)}  # validation and resolution reuse them
    answers_validate(stage, answers)
    item_id = item if isinstance(item, int) else item.pk
    seconds = min(max(float(seconds or 0), 0.0), MAX_SECONDS_PER_ITEM)
    with transaction.atomic():
        assignment = main_queries.lock_assignment(stage_id=stage.pk, item_id=item_id, annotator_id=annotator.pk)
        if assignment is None:
            raise ReservationExpired(
                "This item is no longer reserved for you (the reservation expired and it went to someone else)."
            )
        if assignment.submitted_at is not None:
            return SubmitResult(assignment=assignment, created=False)
        # Serialises the last labels of one item, so exactly one submit sees N and resolves it.
        main_item = main_queries.lock_main_item(stage_id=stage.pk, item_id=item_id)
        now = timezone.now()
        main_queries.insert_main_labels(
            assignment_id=assignment.pk,
            labels=[
                (
                    question_ids[key],
                    "" if answer.unsure else answer.value,
                    answer.unsure,
                    answer.justification.strip(),
                )
                for key, answer in answers.items()
            ],
            seconds=seconds,
            now=now,
        )
        main_queries.mark_submitted(assignment_id=assignment.pk, now=now)
        assignment.submitted_at = now
        item_resolve_if_complete(stage=stage, item_id=item_id, main_item=main_item)
        return SubmitResult(assignment=assignment, created=True)


def labelling_progress(*, annotator, stage: Stage) -> LabellingProgress:
    """Two aggregate queries, whatever the number of items and labels."""
    items = MainItem.objects.filter(stage=stage).count()
    counts = Assignment.objects.filter(stage=stage, phase=Phase.MAIN, submitted_at__isnull=False).aggregate(
        everyone=Count("id"), mine=Count("id", filter=Q(annotator=annotator))
    )
    return LabellingProgress(
        mine=counts["mine"], items=items, labels_done=counts["everyone"], labels_needed=items * stage.overlap
    )


@transaction.atomic
def stage_labelling_configure(
    *, stage: Stage, strategy: str | None = None, seed: int | None = None, reservation_minutes: int | None = None
) -> StageLabelling:
    settings, _ = StageLabelling.objects.get_or_create(stage=stage)
    if strategy is not None:
        if strategy not in StageLabelling.Strategy.values:
            raise ValueError(f"Unknown strategy {strategy!r}.")
        settings.strategy = strategy
    if seed is not None:
        settings.seed = int(seed)
    if reservation_minutes is not None:
        if int(reservation_minutes) < 1:
            raise ValueError("A reservation lasts at least one minute.")
        settings.reservation_minutes = int(reservation_minutes)
    settings.save()
    return settings


def stage_main_open(*, stage: Stage) -> int:
    """Put the project's items (not the stage's training items or examples) into main labelling."""
    return main_items_sync(stage)
