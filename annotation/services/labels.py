"""The one door for labels: `labels_submit` validates an item's answers, enforces the training order for
the phase (pilot, qualification, main), stores them once (a double submit changes nothing) and runs what
follows an answer: the pilot's norming threads, the gate after the last qualification item.

Main labelling reuses this with an assignment made by issue 7's assignment code; here a main label is only
accepted from an annotator who passed the gate and confirmed the current guideline.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import NOT_APPLICABLE, Assignment, Enrollment, Item, Label, Phase, Stage, TrainingItem
from annotation.selectors.training import training_progress
from annotation.workflow.training import Action, StepRefused, check_action

PHASE_ACTIONS = {
    Phase.PILOT: Action.LABEL_PILOT,
    Phase.QUALIFICATION: Action.LABEL_QUALIFICATION,
    Phase.MAIN: Action.LABEL_MAIN,
}
# A single item never takes longer than this of active time; anything above is a clock problem.
MAX_SECONDS_PER_ITEM = 4 * 3600


def active_seconds(value) -> float:
    """The active time a client reported for an item, as stored: 0 to `MAX_SECONDS_PER_ITEM`; a value that
    is not a finite number (NaN, infinity, text) counts as 0 rather than reaching the hours and spend."""
    try:
        seconds = float(value or 0)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(seconds):
        return 0.0
    return min(max(seconds, 0.0), MAX_SECONDS_PER_ITEM)


class LabelInvalid(ValueError):
    """The answers do not fit the stage's questions; ``errors`` maps a question key to what is wrong."""

    def __init__(self, errors: dict[str, str]):
        self.errors = errors
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()))


class NoAssignment(LookupError):
    """The item is not this annotator's to label in this phase."""


@dataclass(frozen=True)
class Answer:
    value: str | None = None
    unsure: bool = False
    justification: str = ""


@dataclass(frozen=True)
class SubmitResult:
    assignment: Assignment
    created: bool


def answers_validate(stage: Stage, answers: dict[str, Answer]) -> dict[str, Answer]:
    """Check every stage question has one valid answer; returns the answers keyed by question key."""
    errors: dict[str, str] = {}
    questions = list(stage.questions.all())
    known = {q.key for q in questions}
    for key in answers:
        if key not in known:
            errors[key] = "not a question of this stage"
    for question in questions:
        answer = answers.get(question.key)
        if answer is None or (not answer.unsure and not answer.value):
            errors[question.key] = "an answer is required"
            continue
        if answer.unsure:
            if not (question.allow_unsure and stage.unsure_enabled):
                errors[question.key] = "Unsure is not an option for this question"
            continue
        if answer.value not in question.values:
            allowed = ", ".join(question.values)
            errors[question.key] = f"{answer.value!r} is not one of the choices ({allowed})"
            continue
        if answer.value == NOT_APPLICABLE and not question.allow_not_applicable:
            errors[question.key] = "not applicable is not an option for this question"
        elif answer.value in question.justification_required_for and not answer.justification.strip():
            errors[question.key] = f"the answer {question.choice_label(answer.value)!r} needs a justification"
    if errors:
        raise LabelInvalid(errors)
    return answers


def _assignment_for(*, stage: Stage, item: Item, annotator, phase: str) -> Assignment:
    if not TrainingItem.objects.filter(stage=stage, item=item, phase=phase).exists():
        raise NoAssignment(f"This item is not part of the stage's {phase}.")
    assignment, _ = Assignment.objects.get_or_create(
        stage=stage, item=item, annotator=annotator, defaults={"phase": phase}
    )
    if assignment.phase != phase:
        raise NoAssignment(f"This item was given to you as {assignment.phase}, not {phase}.")
    return assignment


def labels_submit(
    *, annotator, stage: Stage, item: Item, phase: str, answers: dict[str, Answer], seconds: float = 0.0
) -> SubmitResult:
    """Store the annotator's answers to one item. Refuses (StepRefused) anything out of training order.

    Main labels have one door, `services.labelling.label_submit` (reservations, resolution of the item).
    """
    if phase == Phase.MAIN:
        from .labelling import label_submit

        return label_submit(annotator=annotator, stage=stage, item=item, answers=answers, seconds=seconds)
    enrollment = Enrollment.objects.filter(stage=stage, user=annotator).first()
    if enrollment is None:
        raise StepRefused("You are not enrolled in this stage.")
    check_action(training_progress(enrollment), PHASE_ACTIONS[Phase(phase)])
    answers_validate(stage, answers)
    seconds = active_seconds(seconds)
    questions = {q.key: q for q in stage.questions.all()}
    try:
        with transaction.atomic():
            assignment = _assignment_for(stage=stage, item=item, annotator=annotator, phase=phase)
            if assignment.submitted_at is not None:
                return SubmitResult(assignment=assignment, created=False)
            Label.objects.bulk_create(
                [
                    Label(
                        assignment=assignment,
                        question=questions[key],
                        phase=phase,
                        round=Label.Round.PRE,
                        value="" if answer.unsure else answer.value,
                        unsure=answer.unsure,
                        justification=answer.justification.strip(),
                        seconds=seconds,
                    )
                    for key, answer in answers.items()
                ]
            )
            # Compare-and-swap: only the first of two racing submits marks the assignment done.
            claimed = Assignment.objects.filter(pk=assignment.pk, submitted_at__isnull=True).update(
                submitted_at=timezone.now()
            )
            if not claimed:
                raise IntegrityError("assignment already submitted")
            assignment.refresh_from_db()
    except IntegrityError:
        # The same answers arrived twice at once; the first one stands.
        assignment = Assignment.objects.get(stage=stage, item=item, annotator=annotator)
        return SubmitResult(assignment=assignment, created=False)
    _after_submit(enrollment, phase)
    return SubmitResult(assignment=assignment, created=True)


def _after_submit(enrollment: Enrollment, phase: str) -> None:
    from annotation.services.training import pilot_complete_if_done, qualification_complete_if_done

    if phase == Phase.PILOT:
        pilot_complete_if_done(enrollment)
    elif phase == Phase.QUALIFICATION:
        qualification_complete_if_done(enrollment)
