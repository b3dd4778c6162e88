"""Writes for main labelling: the next item for an annotator who passed the gate, the submit of their
answers (validated like every label by `services.labels.answers_validate`) followed by the item's
resolution once it has its N labels, and a stage's assignment settings.

A submit locks the annotator's assignment and then the item's `MainItem` row, so the N-th label and the
resolution it triggers are decided by exactly one transaction, whichever annotator submits last.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from annotation.models import (
    Assignment,
    Enrollment,
    Guideline,
    GuidelineConfirmation,
    Item,
    Label,
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
from annotation.workflow.assignment import main_items_sync, next_assignment
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


def main_labelling_check(*, annotator, stage: Stage) -> Enrollment:
    """The annotator's enrolment, if they may label main items now (passed, current guideline confirmed).

    The rule is the training step machine's (`check_action(…, LABEL_MAIN)`), fed from one query: main
    labelling is the hot path, and that rule only needs the gate, the replacement and the guideline.
    """
    latest = Guideline.objects.filter(stage=stage).order_by("-version")
    enrollment = (
        Enrollment.objects.filter(stage=stage, user=annotator)
        .annotate(
            guideline_version=Subquery(latest.values("version")[:1]),
            confirmed=Exists(
                GuidelineConfirmation.objects.filter(
                    enrollment=OuterRef("pk"), guideline=Subquery(latest.values("pk")[:1])
                )
            ),
        )
        .first()
    )
    if enrollment is None:
        raise StepRefused("You are not enrolled in this stage.")
    progress = TrainingProgress(
        current_guideline_version=enrollment.guideline_version,
        confirmed_current_guideline=enrollment.confirmed,
        examples_total=0,
        examples_seen=0,
        pilot_total=0,
        pilot_labelled=0,
        norming_done=False,
        qualification_total=0,
        qualification_labelled=0,
        gate_passed=enrollment.gate_passed,
        replaced=enrollment.status == Enrollment.Status.REPLACED,
    )
    check_action(progress, Action.LABEL_MAIN)
    return enrollment


def label_next(*, annotator, stage: Stage) -> Assignment | None:
    """The item to label now (the same one until it is submitted), or None when nothing is left."""
    main_labelling_check(annotator=annotator, stage=stage)
    return next_assignment(stage=stage, annotator=annotator)


def label_submit(
    *, annotator, stage: Stage, item: Item, answers: dict[str, Answer], seconds: float = 0.0
) -> SubmitResult:
    """Store the answers to a reserved main item; a repeated submit changes nothing (created=False).

    Validation is `services.labels.answers_validate`, the same as for pilot and qualification answers.
    Raises StepRefused (not passed), LabelInvalid (answers), ReservationExpired.
    """
    main_labelling_check(annotator=annotator, stage=stage)
    answers_validate(stage, answers)
    seconds = min(max(float(seconds or 0), 0.0), MAX_SECONDS_PER_ITEM)
    with transaction.atomic():
        # Explicit order_by("pk"): the models' default ordering would join (and so lock) the stage row.
        assignment = (
            Assignment.objects.select_for_update()
            .filter(stage=stage, item=item, annotator=annotator, phase=Phase.MAIN)
            .order_by("pk")
            .first()
        )
        if assignment is None:
            raise ReservationExpired(
                "This item is no longer reserved for you (the reservation expired and it went to someone else)."
            )
        if assignment.submitted_at is not None:
            return SubmitResult(assignment=assignment, created=False)
        # Serialises the last labels of one item, so exactly one submit sees N and resolves it.
        MainItem.objects.select_for_update().filter(stage=stage, item=item).order_by("pk").first()
        questions = {q.key: q for q in stage.questions.all()}
        Label.objects.bulk_create(
            [
                Label(
                    assignment=assignment,
                    question=questions[key],
                    phase=Phase.MAIN,
                    round=Label.Round.PRE,
                    value="" if answer.unsure else answer.value,
                    unsure=answer.unsure,
                    justification=answer.justification.strip(),
                    seconds=seconds,
                )
                for key, answer in answers.items()
            ]
        )
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, submitted_at__isnull=True).update(submitted_at=now)
        assignment.submitted_at = now
        item_resolve_if_complete(stage=stage, item=item)
        return SubmitResult(assignment=assignment, created=True)


def labelling_progress(*, annotator, stage: Stage, stage_wide: bool = True) -> LabellingProgress:
    """The annotator's count (one indexed query) and, when ``stage_wide``, the stage's (two aggregates
    whose cost grows with the stage; the API's next-item answer leaves them out)."""
    mine = Assignment.objects.filter(
        stage=stage, annotator=annotator, phase=Phase.MAIN, submitted_at__isnull=False
    ).count()
    if not stage_wide:
        return LabellingProgress(mine=mine, items=0, labels_done=0, labels_needed=0)
    items = MainItem.objects.filter(stage=stage).count()
    everyone = Assignment.objects.filter(stage=stage, phase=Phase.MAIN, submitted_at__isnull=False).count()
    return LabellingProgress(mine=mine, items=items, labels_done=everyone, labels_needed=items * stage.overlap)


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
